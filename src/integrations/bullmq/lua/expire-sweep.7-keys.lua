-- Deletes the marks of groups and the records of batches finished longer
-- than the retention ago (their time is in the expiring sets), at most
-- ARGV[2] of each. A key left holding only finished entries expires with
-- the last of them, so a run nobody coordinates any more leaves nothing;
-- group-store and batch-claim take the expiry off again.
-- KEYS[1] groups, KEYS[2] versions, KEYS[3] stale, KEYS[4] expiring-groups,
-- KEYS[5] batches, KEYS[6] expiring-batches, KEYS[7] batch-counter.
-- ARGV[1] now (ms since the epoch), ARGV[2] the most to delete.
-- Returns {group marks deleted, batch records deleted}.
local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, gid in ipairs(gone) do
  local v = redis.call('HGET', KEYS[1], gid)
  if v and string.sub(v, 1, 1) ~= '{' then
    redis.call('HDEL', KEYS[1], gid)
    redis.call('HDEL', KEYS[2], gid)
  end
  redis.call('LREM', KEYS[3], 1, gid)
  redis.call('ZREM', KEYS[4], gid)
end
local batches = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, b in ipairs(batches) do
  redis.call('HDEL', KEYS[5], b)
  redis.call('ZREM', KEYS[6], b)
end

local function last(zset)
  local top = redis.call('ZRANGE', zset, -1, -1, 'WITHSCORES')
  return top[2]
end
local at = last(KEYS[4])
if at and redis.call('HLEN', KEYS[1]) == redis.call('ZCARD', KEYS[4]) then
  for i = 1, 4 do redis.call('PEXPIREAT', KEYS[i], at) end
end
at = last(KEYS[6])
if at and redis.call('HLEN', KEYS[5]) == redis.call('ZCARD', KEYS[6]) then
  for i = 5, 7 do redis.call('PEXPIREAT', KEYS[i], at) end
end
return {#gone, #batches}
