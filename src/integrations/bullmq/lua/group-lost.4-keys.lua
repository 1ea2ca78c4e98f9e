-- Groups whose trajectories are gone from the payload store (expired, or
-- deleted by hand) before they were trained or handed over: marked 'lost',
-- counted in `payload_lost` (readProgress counts them as failed), off
-- `handing` if they were being handed, and their record queued in
-- `release` (what is left of their payloads is deleted). A group marked
-- already is left as it is.
-- KEYS[1] groups, KEYS[2] stats, KEYS[3] handing, KEYS[4] release.
-- ARGV: group ids. Returns how many were marked.
local n = 0
for _, gid in ipairs(ARGV) do
  redis.call('HDEL', KEYS[3], gid)
  local v = redis.call('HGET', KEYS[1], gid)
  if v and string.sub(v, 1, 1) == '{' then
    redis.call('HSET', KEYS[1], gid, 'lost')
    if string.sub(v, 1, 7) ~= '{"ref":' then v = '' end
    redis.call('RPUSH', KEYS[4], gid .. '\n' .. v)
    n = n + 1
  end
end
if n > 0 then redis.call('HINCRBY', KEYS[2], 'payload_lost', n) end
return n
