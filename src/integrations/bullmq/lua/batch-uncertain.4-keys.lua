-- A batch whose job may exist on the service without its id saved: closed,
-- its groups reported as uncertain (kept, never trained again on our own).
-- KEYS[1] batches, KEYS[2] open-batches, KEYS[3] uncertain, KEYS[4] stats.
-- ARGV[1] batch, ARGV[2] its record (JSON), ARGV[3..] its group ids.
if redis.call('SREM', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
for i = 3, #ARGV do redis.call('SADD', KEYS[3], ARGV[i]) end
redis.call('HINCRBY', KEYS[4], 'uncertain', #ARGV - 2)
return 1
