-- Forms the next training batch, all in one step, so that a group is in at
-- most one batch whatever dies when. Three things, in order:
-- 1. Groups whose rewards are all equal (no-signal-new) teach nothing: with
--    ARGV[4] = 'skip' they are taken off `ready`, their entry read out (the
--    coordinator logs them, not trained) and replaced by the mark
--    'nosignal', and counted; with 'send' they stay in line.
-- 2. With a staleness limit (ARGV[1] >= 0), groups too far behind the
--    published step are taken off `ready`: dropped into `stale` (marked
--    'stale'), or with ARGV[2] = 'rerun' queued in rerun-pending for their
--    re-run.
-- 3. The oldest ARGV[3] groups become a new batch (fewer with ARGV[5] = '1',
--    when draining).
-- A group marked here is queued in `release` with its record, whose
-- payloads the coordinator then deletes (group-final.lua).
-- KEYS[1] ready, KEYS[2] versions, KEYS[3] stale, KEYS[4] stats, KEYS[5] step,
-- KEYS[6] rerun-pending, KEYS[7] batches, KEYS[8] batch-counter,
-- KEYS[9] open-batches, KEYS[10] no-signal-new, KEYS[11] groups,
-- KEYS[12] release, KEYS[13] expiring-batches.
-- Returns {batch or 0, stale ids, batch's group ids, released ids, their entries}.
local function final(gid, mark)
  local v = redis.call('HGET', KEYS[11], gid) or ''
  redis.call('HSET', KEYS[11], gid, mark)
  if string.sub(v, 1, 7) ~= '{"ref":' then v = '' end
  redis.call('RPUSH', KEYS[12], gid .. '\n' .. v)
end

local released, releasedJson = {}, {}
local flat = redis.call('SMEMBERS', KEYS[10])
if #flat > 0 then
  redis.call('DEL', KEYS[10])
  if ARGV[4] == 'skip' then
    for _, gid in ipairs(flat) do
      if redis.call('LREM', KEYS[1], 1, gid) == 1 then
        table.insert(released, gid)
        table.insert(releasedJson, redis.call('HGET', KEYS[11], gid) or '')
        final(gid, 'nosignal')
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

local n = tonumber(ARGV[3])
local len = redis.call('LLEN', KEYS[1])
if len == 0 or (len < n and ARGV[5] ~= '1') then return {0, stale, {}, released, releasedJson} end
if len < n then n = len end
local ids = redis.call('LRANGE', KEYS[1], 0, n - 1)
redis.call('LTRIM', KEYS[1], n, -1)
local b = redis.call('INCR', KEYS[8])
-- An open batch keeps the batch keys (expire-sweep lets them expire once all are finished).
redis.call('PERSIST', KEYS[8])
redis.call('PERSIST', KEYS[7])
redis.call('PERSIST', KEYS[13])
redis.call('HSET', KEYS[7], b, cjson.encode({groups = ids}))
redis.call('SADD', KEYS[9], b)
return {b, stale, ids, released, releasedJson}
