-- Puts uncertain, refused or training-failed groups back at the head of
-- `ready`, in the order given; the next batch or hand-off takes them.
-- KEYS[1] uncertain, KEYS[2] handoff-failed, KEYS[3] ready, KEYS[4] stats,
-- KEYS[5] training-failed. ARGV: group ids. Returns the ids moved.
local moved = {}
for _, gid in ipairs(ARGV) do
  if redis.call('SREM', KEYS[1], gid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'uncertain', -1)
    table.insert(moved, gid)
  elseif redis.call('LREM', KEYS[2], 1, gid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'handoff_failed', -1)
    table.insert(moved, gid)
  elseif redis.call('SREM', KEYS[5], gid) == 1 then
    redis.call('HINCRBY', KEYS[4], 'failed_groups', -1)
    table.insert(moved, gid)
  end
end
for i = #moved, 1, -1 do redis.call('LPUSH', KEYS[3], moved[i]) end
return moved
