-- Run by a coordinator that starts: the hand-offs a stopped one left
-- unconfirmed become uncertain (the sink may or may not have them).
-- KEYS[1] handing, KEYS[2] uncertain, KEYS[3] stats. Returns their ids.
local ids = redis.call('HKEYS', KEYS[1])
for _, gid in ipairs(ids) do redis.call('SADD', KEYS[2], gid) end
if #ids > 0 then
  redis.call('HINCRBY', KEYS[3], 'uncertain', #ids)
  redis.call('DEL', KEYS[1])
end
return ids
