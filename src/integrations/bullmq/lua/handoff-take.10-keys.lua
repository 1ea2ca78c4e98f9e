-- Takes the oldest ready group for the sink, recording it as being handed
-- (by this coordinator's token) before the sink's `add` is called. First, as
-- batch-claim does: groups whose rewards are all equal are released with
-- ARGV[4] = 'skip' (marked 'nosignal' and counted), and with a staleness
-- limit (ARGV[1] >= 0) groups too far behind the published step are dropped
-- into `stale` (marked 'stale') or, with ARGV[2] = 'rerun', queued in
-- rerun-pending. A group marked here is queued in `release` with its record.
-- KEYS[1] ready, KEYS[2] versions, KEYS[3] stale, KEYS[4] stats, KEYS[5] step,
-- KEYS[6] rerun-pending, KEYS[7] groups, KEYS[8] handing, KEYS[9] no-signal-new,
-- KEYS[10] release.
-- ARGV[3] this coordinator's token.
-- Returns {group id or '', stale ids, its entry or '', released ids}.
local function final(gid, mark)
  local v = redis.call('HGET', KEYS[7], gid) or ''
  redis.call('HSET', KEYS[7], gid, mark)
  if string.sub(v, 1, 7) ~= '{"ref":' then v = '' end
  redis.call('RPUSH', KEYS[10], gid .. '\n' .. v)
end

local released = {}
local flat = redis.call('SMEMBERS', KEYS[9])
if #flat > 0 then
  redis.call('DEL', KEYS[9])
  if ARGV[4] == 'skip' then
    for _, gid in ipairs(flat) do
      if redis.call('LREM', KEYS[1], 1, gid) == 1 then
        final(gid, 'nosignal')
        table.insert(released, gid)
      end
    end
    if #released > 0 then redis.call('HINCRBY', KEYS[4], 'nosignal', #released) end
  end
end

local maxs = tonumber(ARGV[1])
local stale = {}
if maxs >= 0 then
  -- The step is read only with a staleness limit: an idle poll costs a command less.
  local step = tonumber(redis.call('GET', KEYS[5]) or '0')
  for _, gid in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
    local v = redis.call('HGET', KEYS[2], gid)
    if v and step - tonumber(v) > maxs then
      redis.call('LREM', KEYS[1], 1, gid)
      if ARGV[2] == 'rerun' then
        redis.call('RPUSH', KEYS[6], gid)
      else
        redis.call('RPUSH', KEYS[3], gid)
        final(gid, 'stale')
      end
      table.insert(stale, gid)
    end
  end
  if #stale > 0 and ARGV[2] ~= 'rerun' then redis.call('HINCRBY', KEYS[4], 'stale', #stale) end
end

local gid = redis.call('LPOP', KEYS[1])
if not gid then return {'', stale, '', released} end
redis.call('HSET', KEYS[8], gid, ARGV[3])
return {gid, stale, redis.call('HGET', KEYS[7], gid) or '', released}
