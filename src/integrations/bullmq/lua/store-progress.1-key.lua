-- Keeps how far a begun call's answer got, while that call is the one begun.
-- KEYS[1] the call's hash. ARGV[1] the call's number, [2] the progress JSON.
-- Returns 1 when kept, 0 when the call is not (or no longer) the begun one.
if redis.call('HGET', KEYS[1], 'call') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'progress', ARGV[2])
return 1
