-- rlcheck: check every rule of one limiter, then record the call in all of
-- them or in none. The keys, all in the hash slot of the key name's {tag}:
--
-- KEYS[1], the head: a hash holding n, the number of calls counted since
--   the state was made (which says the state is there and how recent it
--   is); per bucketed rule, its running total and the ends of its bound
--   (see "Bucketed rules" below); and m and a, the last member counted and
--   its record time, when no rule is exact. While every limiter of the key
--   is held back after a loss it is the string 'lost' instead.
-- KEYS[1+i], rule i's key: for an exact rule, the one sorted set of every
--   exact rule of the limiter (so every exact rule names the same key),
--   whose scores are integer microseconds and where every call brings a
--   member of its own; for a bucketed rule, a hash of the counts of its
--   older buckets, which only a call that changes buckets touches.
--
-- So a call under bucketed rules reads and writes a few fields of the
-- head (one HMGET, one HSET); exact rules add one ZRANGE each and one
-- ZADD; and a call of exact rules alone counts itself in the head with
-- one HINCRBY.
--
-- Each limiter runs a copy of this script whose block between BEGIN
-- CONSTANTS and END CONSTANTS says where its values are (limiter.go): the
-- copy holds only the shape of the configuration (time source, number of
-- rules, which are bucketed), so limiters of any limits and windows share
-- the copy of their shape, and the values (limits, windows, widths,
-- expiries, bounds, the head's field names) come in ARGV from 7 on. The
-- block below is an example with the values written in: rules 2^30/1s,
-- 2^30/1m, 2^30/1h, exact, server time.
--
-- ARGV[1] the call's member;
-- ARGV[2] '1' to sweep the sorted set of its expired entries and look for
--   entries from the far future, else '0';
-- ARGV[3] the head's count n as the caller last saw it while the caller
--   knows the head must exist, else '0';
-- ARGV[4] '1' to refresh every key's expiry when the call is recorded;
-- ARGV[5] check time, ARGV[6] record time, both integer microseconds, or
--   both empty when the script reads the server clock (TIME);
-- ARGV[7] on: the values the constants block names.
-- Reply: {record time, n} when the call is recorded (now, or by an
-- earlier attempt of the same call); else {wait, check, rule, n}: nothing
-- was recorded, and rule i asks for the longest wait. Errors start with a
-- code the client maps: WRONGTYPE, SKEW, CORRUPT, LOST, HELD, CLASH.
--
-- Lua numbers are doubles: epoch microseconds (< 2^53) are exact in them,
-- but Lua's tostring and '..' print only 14 significant digits, and
-- redis.call prints a number argument with printf (slow, and changed
-- between Redis versions); so every value goes to Redis as a string, times
-- made with %d.

-- BEGIN CONSTANTS
-- serverTime: read TIME, else ARGV[5] and ARGV[6]; maxSkew: the largest
-- skew in microseconds allowed between a caller's check time and TIME, or
-- nil for no check; ahead: how far ahead of the check time, in
-- microseconds, an entry may lie before the state counts as corrupt;
-- retry: nil when any entry of the call's member is this call's own (the
-- prefix is random), else, for server time, how many microseconds after
-- its own record a retry of the call may run; life: the head's expiry in
-- ms, and how long every limiter of the key is held back after a loss;
-- zset: the rule whose key is the sorted set (the first exact one), or 0;
-- zlife: the set's expiry in ms; zkeep: how old, in microseconds, an entry
-- of the set may be before a sweep removes it (its longest window plus
-- the keep below). hs, he: the ARGV range of the head's fields to read
-- (per bucketed rule t, f, l, c, then n, then m when no rule is exact), or
-- 0, 0 when every rule is exact. Per rule i: R[i] minus its limit as a
-- string (the rank to read) for an exact rule, its limit for a bucketed
-- one; W[i] its window in microseconds; G[i] its bucket width in
-- microseconds, or 0 for an exact rule; F[i] where its four fields start
-- in the range hs..he, or 0; T[i] its bucket hash's expiry in ms, or 0.
local serverTime, maxSkew, ahead, retry = true, nil, 3660000000, nil
local life, zset, zlife, zkeep, hs, he = '3602000', 1, '3602000', 3601000000, 0, 0
local R = {'-1073741824', '-1073741824', '-1073741824'}
local W = {1000000, 60000000, 3600000000}
local G = {0, 0, 0}
local F = {0, 0, 0}
local T = {0, 0, 0}
-- END CONSTANTS

local call = redis.call
local n = #KEYS - 1
local head = KEYS[1]
local check, record, at
if serverTime then
  local t = call('TIME')
  check = t[1] * 1000000 + t[2]
  record = string.format('%d', check)
  at = check
else
  check = tonumber(ARGV[5])
  record = ARGV[6]
  at = tonumber(record)
  if maxSkew then
    local t = call('TIME')
    local skew = check - (t[1] * 1000000 + t[2])
    if math.abs(skew) > maxSkew then
      local way = 'ahead of'
      if skew < 0 then way = 'behind' end
      return redis.error_reply(string.format('SKEW the client clock is %d µs %s Redis TIME, more than the %d µs allowed',
        math.abs(skew), way, maxSkew))
    end
  end
end

-- Every local a function uses from outside it (an upvalue) costs each run
-- that makes the function, used or not: so the functions of rare paths
-- here take what they need as arguments and reach Redis through globals.

-- held answers a head that is not a hash of counts: the hold after a
-- loss, or something written by hand.
local function held(head)
  local kind = redis.call('TYPE', head)
  kind = kind.ok or kind
  if kind == 'string' and redis.call('GET', head) == 'lost' then
    return redis.error_reply('HELD ' .. head .. ' holds every limiter of the key back for ' ..
      redis.call('PTTL', head) .. ' ms more, after a limiter found the state lost or restored from an older snapshot')
  end
  if kind == 'hash' then
    return redis.error_reply('CORRUPT key ' .. head .. ' holds a count that is not an integer: delete the key')
  end
  return redis.error_reply('WRONGTYPE rlcheck: key ' .. head .. ' holds a ' .. tostring(kind) ..
    ', not the hash of counts of a rate limiter')
end

-- The head's n counts the calls recorded under the key; the head lives as
-- long as recent admissions need it. Its absence while the caller counts
-- on it means the state was lost (FLUSHALL, eviction, a restart without
-- the data, a failover to a replica that lacked it); a count below the
-- one the caller saw means it was restored from an older snapshot. Either
-- way the state is deleted and every limiter of the key is held back for
-- life ms, by which time no call recorded before the loss is in any
-- window: the head holds 'lost' until then.
local function lost(old, seen, life)
  local why = ' counts ' .. old .. ' calls where this limiter saw ' .. seen
  if old == 0 then why = ' is gone' end
  for i = 2, #KEYS do redis.call('DEL', KEYS[i]) end
  redis.call('SET', KEYS[1], 'lost', 'PX', life)
  return redis.error_reply('LOST ' .. KEYS[1] .. why .. ' while this limiter holds recent admissions: ' ..
    'the limiter state was flushed, evicted, lost in a restart or failover, or restored from an older snapshot')
end

-- A call of exact rules alone counts itself before deciding (a refused
-- call too: n only has to grow); a call with bucketed rules reads n with
-- their fields and writes n + 1 with them when it records.
local h, live, old, lastMember
if hs == 0 then
  live = redis.pcall('HINCRBY', head, 'n', '1')
  if type(live) ~= 'number' then return held(head) end
  if live == 1 then call('PEXPIRE', head, life) end
  old = live - 1
else
  h = redis.pcall('HMGET', head, unpack(ARGV, hs, he))
  if h.err then return held(head) end
  old = h[he - hs + 1]
  if zset == 0 then old = h[he - hs] end
  if old then
    old = tonumber(old)
    if not old then return held(head) end
  else
    old = 0
  end
  live = old
  if zset == 0 then lastMember = h[he - hs + 1] end
end
if ARGV[3] ~= '0' and old < tonumber(ARGV[3]) then
  return lost(old, ARGV[3], life)
end

-- An earlier attempt of this very call (a retry after a lost reply) may
-- have recorded it already: then report that record. The member's entry
-- is the call's own when the prefix is random, when its score is the
-- caller-supplied record time, or, for server time, when it is recent
-- enough to be a retry's. The head remembers only the last member, so
-- under bucketed rules alone a retry that comes after another call of the
-- key counts again: capacity spent without a send, never the reverse.
local function earlier(zset, last, at, check, retry, serverTime)
  local s
  if zset > 0 then
    s = redis.call('ZSCORE', KEYS[zset + 1], ARGV[1])
  elseif last == ARGV[1] then
    s = redis.call('HGET', KEYS[1], 'a')
  end
  if not s then return nil end
  s = tonumber(s)
  if not retry or (not serverTime and s == at) or
      (serverTime and s <= check and check - s <= retry) then
    return s
  end
  return redis.error_reply('CLASH member ' .. ARGV[1] .. ' is already in ' .. KEYS[math.max(zset, 0) + 1] ..
    ' from another call: limiters sharing a key need distinct member prefixes')
end

-- No entry belongs further ahead of the check time than ahead: one that
-- does was written by a broken clock or by hand, and would hold the rule
-- full for as long as it lies ahead.
local format = string.format
local function corrupt(key, score, check)
  return redis.error_reply(string.format('CORRUPT key %s holds an entry at %d µs, %d s ahead of the script clock (%d µs): delete the key',
    key, tonumber(score), math.floor((tonumber(score) - check) / 1000000), check))
end
local function wrongType(key, want)
  local kind = redis.call('TYPE', key)
  return redis.error_reply('WRONGTYPE rlcheck: key ' .. key .. ' holds a ' ..
    tostring(kind.ok or kind) .. ', not the ' .. want .. ' of a rate rule')
end

-- Bucketed rules. Bucket b counts the calls recorded in [b*g, (b+1)*g)
-- µs, g the rule's bucket width; the calls in the window (t-W, t] all lie
-- in the buckets floor((t-W)/g) to floor(t/g), so their sum bounds the
-- window's count, and the rule is full when it reaches the limit. The
-- head holds, per rule, t, the total over the buckets f (the oldest still
-- in the bound) to l (the newest counted), and c, the count of bucket l;
-- the rule's bucket hash holds the counts of the older buckets under
-- their bucket numbers. A bucket that leaves the bound is subtracted from
-- t and deleted on the next record, so a call reads and writes a few
-- fields whatever the bucket count, and a call in bucket l touches only
-- the head. A call whose window starts before f (an instant older than
-- one already used) waits until it starts at f: the counts before it are
-- gone.
--
-- fields and sum read buckets in chunks of at most 1000, as unpack takes
-- a bounded number of values; they write 1000 (and 999) out rather than
-- capture a local, which every run would pay for.
local function fields(from, to)
  local f = {}
  for b = from, math.min(to, from + 999) do
    f[#f + 1] = string.format('%d', b)
  end
  return f
end
-- sum adds the counts of buckets from to to of a rule whose bucket l
-- (counted in c) is last: all of them, or, given need, only until they
-- reach it, then also returning the bucket where they did. With need it
-- reads 4 buckets first, then 4 times as many each time: the wait of a
-- full rule usually lies in its oldest buckets, and each name read costs.
local function sum(key, from, to, last, c, need)
  local acc = 0
  local top = math.min(to, last - 1)
  local size = 1000
  if need then size = 4 end
  local lo = from
  while lo <= top do
    local hi = math.min(top, lo + size - 1)
    local got = redis.pcall('HMGET', key, unpack(fields(lo, hi)))
    if got.err then
      return nil, wrongType(key, 'hash of bucket counts')
    end
    for j = 1, #got do
      acc = acc + (tonumber(got[j]) or 0)
      if need and acc >= need then return acc, lo + j - 1 end
    end
    lo = hi + 1
    size = math.min(size * 4, 1000)
  end
  if to >= last then acc = acc + c end
  return acc, last
end

-- What the record writes to the head, as HSET arguments, and per bucketed
-- rule that leaves bucket l, {its bucket hash, the bucket to add to or
-- nil, the count, buckets to drop from, to} in moves.
local set = {}
local moves

-- An exact rule is full when its limit-th latest entry is still in the
-- window (check - score < window, half-open); the call may go when that
-- entry leaves. Reading that one entry decides the rule without trimming
-- first, so a refused call records nothing.
local cue = ARGV[2] == '1'
local wait, binding, expired = 0, 0, cue
for i = 1, n do
  local key, w, g = KEYS[i + 1], W[i], G[i]
  if g ~= 0 then
    -- Lua's a % b is a - floor(a / b) * b: exact here, since |a| + b
    -- stays below 2^53 (epoch microseconds and windows up to a century),
    -- where a / b cannot round up to the next integer; and in [0, b)
    -- for negative a too (virtual time near zero).
    local x = check - w
    local lo = (x - x % g) / g
    local cur = (at - at % g) / g
    if cur < lo then cur = lo end
    local o = F[i]
    -- The fields hold integers this script wrote; '+ 0' converts them
    -- as tonumber does, without a function call, and ends the script
    -- with an error on a field that is not a number (written by hand).
    local total, old, last, c = h[o], h[o + 1], h[o + 2], h[o + 3]
    if total then total = total + 0 else total = 0 end
    if old then old = old + 0 end
    if last then last = last + 0 else last = lo - 1 end
    if c then c = c + 0 else c = 0 end
    -- 'nan' and 'inf' convert too; x - x is 0 only for a finite x.
    local probe = total + last + c + (old or 0)
    if probe - probe ~= 0 then
      return redis.error_reply('CORRUPT key ' .. head .. ' holds a bucket field that is not a finite number: delete the key')
    end
    local first = old or lo
    if last * g - check > ahead then
      return corrupt(head, format('%d', last * g), check)
    end
    if lo < first then
      local rw = first * g + w - check
      if rw > wait then wait, binding = rw, i end
    else
      local dropTo
      if first < lo then
        dropTo = math.min(lo - 1, last)
        local gone, err = sum(key, first, dropTo, last, c)
        if not gone then return err end
        total = total - gone
        first = lo
      end
      local count = 0
      if cur == last then
        count = c
      elseif cur < last then -- an instant older than one already counted
        local got = redis.pcall('HGET', key, format('%d', cur))
        if type(got) == 'table' and got.err then
          return wrongType(key, 'hash of bucket counts')
        end
        count = tonumber(got) or 0
      end
      local limit = R[i]
      if total >= limit then
        -- The wait ends when the oldest buckets holding total - limit + 1
        -- calls leave; when the older ones hold fewer, that is bucket l,
        -- with nothing to read.
        local need, b = total - limit + 1, last
        if total - c >= need then
          local got
          got, b = sum(key, first, last, last, c, need)
          if not got then return b end
        end
        local rw = (b + 1) * g + w - check
        if rw > wait then wait, binding = rw, i end
      elseif wait == 0 then
        -- Head fields: the count of l (or of the call's bucket once l
        -- moves there), the total, and the bound's ends when they moved.
        -- ARGV[hs + o - 1 .. hs + o + 2] name t, f, l and c.
        local k = #set
        set[k + 1], set[k + 2] = ARGV[hs + o - 1], format('%d', total + 1)
        if cur == last then
          set[k + 3], set[k + 4] = ARGV[hs + o + 2], format('%d', c + 1)
        elseif cur > last then
          set[k + 3], set[k + 4] = ARGV[hs + o + 2], '1'
          set[k + 5], set[k + 6] = ARGV[hs + o + 1], format('%d', cur)
        end
        if first ~= old then
          set[#set + 1] = ARGV[hs + o]
          set[#set + 1] = format('%d', first)
        end
        if cur ~= last or dropTo then
          -- A call after l moves c to l's own field of the bucket hash;
          -- one before l adds to its bucket there.
          local to, v
          if cur > last and last >= first and c > 0 then
            to, v = last, c
          elseif cur < last then
            to, v = cur, count + 1
          end
          moves = moves or {}
          moves[#moves + 1] = {key, to, v, old, dropTo and math.min(dropTo, last - 1), T[i]}
        end
      end
    end
  else
    local rank = R[i]
    local entry = redis.pcall('ZRANGE', key, rank, rank, 'WITHSCORES')
    if entry.err then
      return wrongType(key, 'sorted set')
    end
    if entry[2] then
      local score = tonumber(entry[2])
      if score - check > ahead then
        return corrupt(key, entry[2], check)
      end
      local rw = score + w - check
      if rw > wait then
        wait, binding = rw, i
      elseif score <= check - zkeep then
        -- Entries past keeping do not change any decision; they are swept
        -- when a rule's limit-th latest entry is one, or on the caller's
        -- cue.
        expired = true
      end
    end
  end
end
if cue and zset > 0 then
  local key = KEYS[zset + 1]
  local last = call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] and tonumber(last[2]) - check > ahead then
    return corrupt(key, last[2], check)
  end
end
if wait > 0 then
  local s = earlier(zset, lastMember, at, check, retry, serverTime)
  if type(s) == 'number' then return {s, live} end
  if s then return s end
  return {wait, check, binding, live}
end

-- The sorted set goes first: a retry finds its record there before
-- counting anything twice. The record goes in before the sweep, so a
-- sweep never empties the set: Redis would delete the key, and ZADD would
-- make it again without expiry. A sweep removes only entries older than
-- the longest window plus keep. A caller's clock (Client, Virtual) can
-- bring an instant older than one already used, and such a call must
-- still see every entry that shares a window with it; entries newer than
-- the call only make its decision stricter. So there keep is the window
-- again, and at least 1 s: calls up to that much older than the newest
-- sweeping call are judged in full. Under server time every call is
-- judged at TIME, which only a clock step sets back: 1 s covers it, and a
-- day's set keeps one day, not two.
if zset > 0 then
  local key = KEYS[zset + 1]
  if call('ZADD', key, 'NX', record, ARGV[1]) == 0 then
    local s = earlier(zset, lastMember, at, check, retry, serverTime)
    if type(s) == 'number' then return {s, live} end
    if s then return s end
    return redis.error_reply('CLASH member ' .. ARGV[1] .. ' is already in ' .. key ..
      ': limiters sharing a key need distinct member prefixes')
  end
  if expired then
    call('ZREMRANGEBYSCORE', key, '-inf', format('%d', check - zkeep))
  end
elseif lastMember == ARGV[1] then
  local s = earlier(zset, lastMember, at, check, retry, serverTime)
  if type(s) == 'number' then return {s, live} end
  if s then return s end
end
if moves then
  for j = 1, #moves do
    local mv = moves[j]
    local key, from, to = mv[1], mv[4], mv[5]
    if to and from <= to then
      for b = from, to, 1000 do
        call('HDEL', key, unpack(fields(b, to)))
      end
    end
    if mv[2] then
      local r = redis.pcall('HSET', key, format('%d', mv[2]), format('%d', mv[3]))
      if type(r) == 'table' and r.err then
        return wrongType(key, 'hash of bucket counts')
      end
      call('PEXPIRE', key, mv[6])
    end
  end
end
if hs > 0 then
  live = old + 1
  local k = #set
  set[k + 1], set[k + 2] = 'n', format('%d', live)
  if zset == 0 then
    set[k + 3], set[k + 4], set[k + 5], set[k + 6] = 'm', ARGV[1], 'a', record
  end
  call('HSET', head, unpack(set))
end

-- Expiry. Every key outlives a record made now by at least its window
-- plus a lease: the caller asks for a refresh at most a lease after its
-- last one, which sets each key to expire its window plus two leases from
-- now (the head never sooner than it already would: limiters with longer
-- windows may share it). A bucket hash is refreshed whenever a bucket is
-- written to it, since it may have been empty, and so gone, before.
if ARGV[4] == '1' or (hs > 0 and old == 0) then
  if call('PTTL', head) < tonumber(life) then
    call('PEXPIRE', head, life)
  end
  if ARGV[4] == '1' then
    if zset > 0 then call('PEXPIRE', KEYS[zset + 1], zlife) end
    for i = 1, n do
      if G[i] ~= 0 then call('PEXPIRE', KEYS[i + 1], T[i]) end
    end
  end
end
return {at, live}
