-- Run once by a coordinator that starts: marks and finished batch records
-- written before marks expired (an older version) get an expiry time, so
-- that a running deployment's old entries go too. Entries timed already
-- keep theirs.
-- KEYS[1] groups, KEYS[2] expiring-groups, KEYS[3] batches,
-- KEYS[4] expiring-batches, KEYS[5] open-batches.
-- ARGV[1] when they expire (ms since the epoch). Returns how many were timed.
local n = 0
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  if string.sub(all[i + 1], 1, 1) ~= '{' then
    n = n + redis.call('ZADD', KEYS[2], 'NX', ARGV[1], all[i])
  end
end
for _, b in ipairs(redis.call('HKEYS', KEYS[3])) do
  if redis.call('SISMEMBER', KEYS[5], b) == 0 then
    n = n + redis.call('ZADD', KEYS[4], 'NX', ARGV[1], b)
  end
end
return n
