-- Closes a batch in one step: its record, its counters, the groups' JSON
-- replaced by the mark 'trained:<batch>' (they stay "collected", so a late
-- collector adds nothing) and the new step published; or, when it failed,
-- its groups set aside in training-failed.
-- KEYS[1] batches, KEYS[2] open-batches, KEYS[3] stats, KEYS[4] groups,
-- KEYS[5] step, KEYS[6] the policy channel, KEYS[7] training-failed.
-- ARGV[1] batch, ARGV[2] its record (JSON), ARGV[3] the new step or -1,
-- ARGV[4] 'trained' or 'failed', ARGV[5..] the batch's group ids.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('SREM', KEYS[2], ARGV[1])
if ARGV[4] == 'trained' then
  redis.call('HINCRBY', KEYS[3], 'trained_groups', #ARGV - 4)
  redis.call('HINCRBY', KEYS[3], 'training_jobs', 1)
  for i = 5, #ARGV do redis.call('HSET', KEYS[4], ARGV[i], 'trained:' .. ARGV[1]) end
  local cur = tonumber(redis.call('GET', KEYS[5]) or '-1')
  if tonumber(ARGV[3]) > cur then
    redis.call('SET', KEYS[5], ARGV[3])
    redis.call('PUBLISH', KEYS[6], ARGV[3])
  end
else
  redis.call('HINCRBY', KEYS[3], 'failed_jobs', 1)
  redis.call('HINCRBY', KEYS[3], 'failed_groups', #ARGV - 4)
  for i = 5, #ARGV do redis.call('SADD', KEYS[7], ARGV[i]) end
end
return 1
