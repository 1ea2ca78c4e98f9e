-- Adds what an open trajectory gained, when it continues the stored state.
-- KEYS as store-put.lua. ARGV[1] id, [2] session, [3] calls, [4] model ('' keeps
-- the stored one), [5] metadata JSON ('' for none), [6] now (ms), [7] the
-- lengths JSON it continues, [8] the lengths JSON after it, [9] the main
-- history's length after it, [10] the append's JSON.
-- Returns the bytes the store now holds, or -1 (nothing written) when the
-- stored state is not the open one of lengths ARGV[7].
local t = KEYS[1]
if redis.call('HGET', t, 'status') ~= 'open' or redis.call('HGET', t, 'lengths') ~= ARGV[7] then
  return -1
end
local size = string.len(ARGV[10])
local model = ARGV[4]
if model == '' then model = redis.call('HGET', t, 'model') or '' end
local updated = tonumber(ARGV[6])
local prior = tonumber(redis.call('HGET', t, 'updated') or '0')
if prior > updated then updated = prior end
redis.call('RPUSH', KEYS[2], ARGV[10])
redis.call('HSET', t, 'session', ARGV[2], 'calls', ARGV[3], 'model', model, 'metadata', ARGV[5],
  'updated', updated, 'lengths', ARGV[8], 'main', ARGV[9])
redis.call('HINCRBY', t, 'appended', size)
redis.call('HINCRBY', t, 'bytes', size)
redis.call('ZADD', KEYS[3], updated, ARGV[1])
local begun = redis.call('HGET', KEYS[5], ARGV[1])
if begun and tonumber(begun) <= tonumber(ARGV[3]) then
  redis.call('HDEL', KEYS[5], ARGV[1])
  redis.call('DEL', KEYS[6])
end
return redis.call('HINCRBY', KEYS[4], 'bytes', size)
