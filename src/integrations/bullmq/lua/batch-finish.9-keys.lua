-- Closes a batch in one step: its record, its counters, the groups' entries
-- replaced by the mark 'trained:<batch>' (they stay "collected", so a late
-- collector adds nothing; their records go to `release`, whose payloads the
-- coordinator then deletes) and the new step published; or, when it failed,
-- its groups set aside in training-failed; or, 'empty' (every group's
-- payloads were gone), only closed. The record expires at ARGV[5].
-- KEYS[1] batches, KEYS[2] open-batches, KEYS[3] stats, KEYS[4] groups,
-- KEYS[5] step, KEYS[6] the policy channel, KEYS[7] training-failed,
-- KEYS[8] release, KEYS[9] expiring-batches.
-- ARGV[1] batch, ARGV[2] its record (JSON), ARGV[3] the new step or -1,
-- ARGV[4] 'trained', 'failed' or 'empty', ARGV[5] when the record expires
-- (ms since the epoch), ARGV[6..] the batch's group ids.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[2], ARGV[1])
local groups = #ARGV - 5
if ARGV[4] == 'trained' then
  redis.call('HINCRBY', KEYS[3], 'trained_groups', groups)
  redis.call('HINCRBY', KEYS[3], 'training_jobs', 1)
  for i = 6, #ARGV do
    local v = redis.call('HGET', KEYS[4], ARGV[i]) or ''
    redis.call('HSET', KEYS[4], ARGV[i], 'trained:' .. ARGV[1])
    if string.sub(v, 1, 7) ~= '{"ref":' then v = '' end
    redis.call('RPUSH', KEYS[8], ARGV[i] .. '\n' .. v)
  end
  local cur = tonumber(redis.call('GET', KEYS[5]) or '-1')
  if tonumber(ARGV[3]) > cur then
    redis.call('SET', KEYS[5], ARGV[3])
    redis.call('PUBLISH', KEYS[6], ARGV[3])
  end
elseif ARGV[4] == 'failed' then
  redis.call('HINCRBY', KEYS[3], 'failed_jobs', 1)
  redis.call('HINCRBY', KEYS[3], 'failed_groups', groups)
  for i = 6, #ARGV do redis.call('SADD', KEYS[7], ARGV[i]) end
end
-- A failed batch's record goes when its groups do not: they are listed in training-failed.
redis.call('ZADD', KEYS[9], ARGV[5], ARGV[1])
return 1
