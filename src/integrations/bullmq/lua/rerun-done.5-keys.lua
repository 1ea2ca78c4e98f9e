-- A stale group's re-run is in Redis (or it was dropped instead): off
-- rerun-pending, its entry marked 'rerun:<new id>' and counted, or with
-- ARGV[2] = '' dropped into `stale` (marked 'stale'). Either way its record
-- is queued in `release` (its payloads are not needed: the re-run makes new ones).
-- KEYS[1] rerun-pending, KEYS[2] groups, KEYS[3] stale, KEYS[4] stats,
-- KEYS[5] release.
-- ARGV[1] group id, ARGV[2] the re-run's id or ''.
if redis.call('LREM', KEYS[1], 1, ARGV[1]) == 0 then return 0 end
local v = redis.call('HGET', KEYS[2], ARGV[1]) or ''
if ARGV[2] == '' then
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], 'stale')
  redis.call('HINCRBY', KEYS[4], 'stale', 1)
else
  redis.call('HSET', KEYS[2], ARGV[1], 'rerun:' .. ARGV[2])
  redis.call('HINCRBY', KEYS[4], 'rerun', 1)
end
if string.sub(v, 1, 7) ~= '{"ref":' then v = '' end
redis.call('RPUSH', KEYS[5], ARGV[1] .. '\n' .. v)
return 1
