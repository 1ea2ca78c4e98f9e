-- The sink refused a group (its `add` rejected): back to the head of `ready`
-- for another try, or, with ARGV[2] = 'fail', into handoff-failed.
-- KEYS[1] handing, KEYS[2] ready, KEYS[3] handoff-failed, KEYS[4] stats.
-- ARGV[1] group id, ARGV[2] 'retry' or 'fail'.
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
if ARGV[2] == 'fail' then
  redis.call('RPUSH', KEYS[3], ARGV[1])
  redis.call('HINCRBY', KEYS[4], 'handoff_failed', 1)
else
  redis.call('LPUSH', KEYS[2], ARGV[1])
end
return 1
