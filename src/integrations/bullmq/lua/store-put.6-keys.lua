-- Writes a trajectory's full state: its appends are folded into it, so they go.
-- KEYS[1] the trajectory's hash, [2] its appends, [3] the order (id by last
-- write), [4] the store's meta hash, [5] the begun calls (id -> call number),
-- [6] the trajectory's begun call (its request and progress).
-- ARGV[1] id, [2] session ('' for none), [3] status, [4] calls, [5] model
-- ('' keeps the stored one), [6] metadata JSON ('' for none), [7] now (ms),
-- [8] the trajectory's JSON, [9] its main history's length, [10] its lengths
-- JSON, [11] 1 when an interrupted call is kept in it, [12] created (ms) for a
-- new record. Returns the bytes the store now holds.
local t = KEYS[1]
local old = tonumber(redis.call('HGET', t, 'bytes') or '0')
local appended = tonumber(redis.call('HGET', t, 'appended') or '0')
local created = redis.call('HGET', t, 'created') or ARGV[12]
local model = ARGV[5]
if model == '' then model = redis.call('HGET', t, 'model') or '' end
local interrupted = redis.call('HGET', t, 'interrupted') or '0'
if ARGV[11] == '1' then interrupted = '1' end
local feedbackBytes = old - appended - tonumber(redis.call('HGET', t, 'state_bytes') or '0')
local stateBytes = string.len(ARGV[8])
local bytes = stateBytes + feedbackBytes
local updated = tonumber(ARGV[7])
local prior = tonumber(redis.call('HGET', t, 'updated') or '0')
if prior > updated then updated = prior end
redis.call('DEL', KEYS[2])
redis.call('HSET', t, 'id', ARGV[1], 'session', ARGV[2], 'status', ARGV[3], 'calls', ARGV[4],
  'model', model, 'metadata', ARGV[6], 'created', created, 'updated', updated,
  'state', ARGV[8], 'main', ARGV[9], 'lengths', ARGV[10], 'interrupted', interrupted,
  'state_bytes', stateBytes, 'appended', 0, 'bytes', bytes)
redis.call('ZADD', KEYS[3], updated, ARGV[1])
local begun = redis.call('HGET', KEYS[5], ARGV[1])
if begun and tonumber(begun) <= tonumber(ARGV[4]) then
  redis.call('HDEL', KEYS[5], ARGV[1])
  redis.call('DEL', KEYS[6])
end
return redis.call('HINCRBY', KEYS[4], 'bytes', bytes - old)
