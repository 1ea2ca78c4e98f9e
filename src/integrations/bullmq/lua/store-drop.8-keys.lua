-- Drops a trajectory (the bounds): its state, appends, feedback, begun call
-- and the idempotency keys of its feedback, and counts the drop.
-- KEYS[1] the trajectory's hash, [2] its appends, [3] its feedback, [4] its
-- begun call's hash, [5] the order, [6] the meta hash, [7] the idempotency
-- keys' hash, [8] the begun calls (id -> call number). ARGV[1] id.
-- Returns 1 when dropped, 0 when it was not stored.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local bytes = tonumber(redis.call('HGET', KEYS[1], 'bytes') or '0')
for _, raw in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
  local ok, record = pcall(cjson.decode, raw)
  if ok and type(record.idempotency_key) == 'string' then
    redis.call('HDEL', KEYS[7], record.idempotency_key)
  end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('HDEL', KEYS[8], ARGV[1])
redis.call('HINCRBY', KEYS[6], 'bytes', -bytes)
redis.call('HINCRBY', KEYS[6], 'dropped', 1)
return 1
