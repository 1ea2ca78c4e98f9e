-- The short mark each group's entry ends as ('trained:3', 'handed', ...), or
-- 'json' while its JSON is kept: read in Redis, so no JSON travels.
-- KEYS[1] groups. Returns {id, mark, id, mark, ...}.
local out = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local v = all[i + 1]
  out[#out + 1] = all[i]
  if string.sub(v, 1, 1) == '{' then out[#out + 1] = 'json' else out[#out + 1] = v end
end
return out
