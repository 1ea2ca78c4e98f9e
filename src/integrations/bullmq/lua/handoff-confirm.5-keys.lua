-- Marks a group handed once the sink's `add` resolved: its entry is replaced
-- by the mark 'handed' (its record queued in `release`, whose payloads the
-- coordinator then deletes). A group reported uncertain by a coordinator
-- that took over, and then confirmed by the one that handed it (it had lost
-- its lock, not died), is counted handed after all.
-- KEYS[1] handing, KEYS[2] uncertain, KEYS[3] stats, KEYS[4] groups,
-- KEYS[5] release.
-- ARGV[1] group id. Returns 1 when marked.
local done = 0
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then
  done = 1
elseif redis.call('SREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[3], 'uncertain', -1)
  done = 1
end
if done == 1 then
  local v = redis.call('HGET', KEYS[4], ARGV[1]) or ''
  redis.call('HSET', KEYS[4], ARGV[1], 'handed')
  if string.sub(v, 1, 7) ~= '{"ref":' then v = '' end
  redis.call('RPUSH', KEYS[5], ARGV[1] .. '\n' .. v)
  redis.call('HINCRBY', KEYS[3], 'handed', 1)
end
return done
