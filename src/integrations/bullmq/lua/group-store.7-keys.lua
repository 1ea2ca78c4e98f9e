-- Stores a scored group and queues it for training in one step: a collector
-- that dies before it leaves nothing; one that dies after it finds the group
-- there when it runs the parent job again, and adds nothing. The entry is a
-- small record of where the group's trajectories are (group-record.ts).
-- KEYS[1] groups, KEYS[2] ready, KEYS[3] stats, KEYS[4] versions,
-- KEYS[5] no-signal-new, KEYS[6] stale, KEYS[7] expiring-groups.
-- ARGV[1] group id, ARGV[2] its record, ARGV[3] its oldest policy step or '',
-- ARGV[4] reward sum, ARGV[5] reward count, ARGV[6] exceptions,
-- ARGV[7] '1' when its rewards differ, '0' when they are all equal.
-- Returns 1 when stored, 0 when it was stored already.
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
-- Keys that held only finished groups expire with them (expire-sweep); a
-- waiting group keeps them.
redis.call('PERSIST', KEYS[1])
redis.call('PERSIST', KEYS[4])
redis.call('PERSIST', KEYS[6])
redis.call('PERSIST', KEYS[7])
redis.call('RPUSH', KEYS[2], ARGV[1])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[4], ARGV[1], ARGV[3]) end
redis.call('HINCRBY', KEYS[3], 'collected', 1)
redis.call('HINCRBYFLOAT', KEYS[3], 'reward_sum', ARGV[4])
redis.call('HINCRBY', KEYS[3], 'reward_count', ARGV[5])
redis.call('HINCRBY', KEYS[3], 'exceptions', ARGV[6])
if ARGV[7] == '0' then redis.call('SADD', KEYS[5], ARGV[1]) end
return 1
