-- rlcheck: 3 rules, half-open windows, times in ms, integer arithmetic.
-- rule 0: 10/1s: send i breaks it when t_{i-10} >= t_i - 999.
-- rule 1: 500/1m: send i breaks it when t_{i-500} >= t_i - 59999.
-- rule 2: 10000/24h: send i breaks it when t_{i-10000} >= t_i - 86399999.
WITH src AS NOT MATERIALIZED (
  SELECT COALESCE(CAST("tenant" AS VARCHAR), '') AS k, CAST("ts_ms" AS BIGINT) AS t, CAST("line" AS BIGINT) AS tb
  FROM "sends"
),
s AS NOT MATERIALIZED (
  SELECT k, t,
    lag(t, 10) OVER w AS l0,
    lag(t, 500) OVER w AS l1,
    lag(t, 10000) OVER w AS l2
  FROM src
  WINDOW w AS (PARTITION BY k ORDER BY t)
),
a AS MATERIALIZED (
  SELECT *, GREATEST(ft0, ft1, ft2) AS fm FROM (
    SELECT k, count(*) AS sends, min(t) AS first_t, max(t) AS last_t,
      count(*) FILTER (WHERE l0 >= t - 999) AS n0, min(t) FILTER (WHERE l0 >= t - 999) AS ft0,
      count(*) FILTER (WHERE l1 >= t - 59999) AS n1, min(t) FILTER (WHERE l1 >= t - 59999) AS ft1,
      count(*) FILTER (WHERE l2 >= t - 86399999) AS n2, min(t) FILTER (WHERE l2 >= t - 86399999) AS ft2
    FROM s GROUP BY k
  ) a0
),
b AS MATERIALIZED (
  SELECT src.k, count(*) FILTER (WHERE t < a.ft0 - 999) AS lo0, min(t) FILTER (WHERE t >= a.ft0 - 999) AS wt0,
    count(*) FILTER (WHERE t < a.ft0) AS bf0,
    count(*) FILTER (WHERE t < a.ft1 - 59999) AS lo1, min(t) FILTER (WHERE t >= a.ft1 - 59999) AS wt1,
    count(*) FILTER (WHERE t < a.ft1) AS bf1,
    count(*) FILTER (WHERE t < a.ft2 - 86399999) AS lo2, min(t) FILTER (WHERE t >= a.ft2 - 86399999) AS wt2,
    count(*) FILTER (WHERE t < a.ft2) AS bf2
  FROM src JOIN a ON src.k = a.k AND src.t <= a.fm GROUP BY src.k
),
spot AS (
  SELECT a.k, 0 AS r, a.ft0 AS t, b.lo0 + 10 - b.bf0 AS p FROM a JOIN b ON a.k = b.k
  UNION ALL
  SELECT b.k, 1, wt0, 0 FROM b
  UNION ALL
  SELECT a.k, 2 AS r, a.ft1 AS t, b.lo1 + 500 - b.bf1 AS p FROM a JOIN b ON a.k = b.k
  UNION ALL
  SELECT b.k, 3, wt1, 0 FROM b
  UNION ALL
  SELECT a.k, 4 AS r, a.ft2 AS t, b.lo2 + 10000 - b.bf2 AS p FROM a JOIN b ON a.k = b.k
  UNION ALL
  SELECT b.k, 5, wt2, 0 FROM b
),
ref AS MATERIALIZED (
  SELECT k, r, tb FROM (
    SELECT spot.k, spot.r, spot.p, src.tb, row_number() OVER (PARTITION BY spot.k, spot.r ORDER BY src.tb) - 1 AS q
    FROM src JOIN spot ON src.k = spot.k AND src.t = spot.t
  ) z WHERE q = p
),
bt AS MATERIALIZED (
  SELECT count(*) FILTER (WHERE "ts_ms" IS NULL OR "ts_ms" < 0 OR CAST("ts_ms" AS DECIMAL(38, 9)) <> CAST("ts_ms" AS BIGINT)) AS n
  FROM "sends"
)
SELECT a.k AS key, 0 AS rule_index, '10/1s' AS rule, a.sends AS sends, a.first_t AS first_t, a.last_t AS last_t, a.n0 AS violations, CASE WHEN a.ft0 IS NOT NULL THEN b.lo0 + 10 END AS first_index, a.ft0 AS first_t_violation, f.tb AS first_ref, CASE WHEN a.ft0 IS NOT NULL THEN b.lo0 END AS first_window_index, b.wt0 AS first_window_t, g.tb AS first_window_ref, CAST(NULL AS BIGINT) AS max_in_window, CAST(NULL AS BIGINT) AS max_window_t, CAST(NULL AS BIGINT) AS max_window_ref, (SELECT n FROM bt) AS bad_times
FROM a LEFT JOIN b ON a.k = b.k
  LEFT JOIN ref f ON f.k = a.k AND f.r = 0
  LEFT JOIN ref g ON g.k = a.k AND g.r = 1
UNION ALL
SELECT a.k, 1, '500/1m', a.sends, a.first_t, a.last_t, a.n1, CASE WHEN a.ft1 IS NOT NULL THEN b.lo1 + 500 END, a.ft1, f.tb, CASE WHEN a.ft1 IS NOT NULL THEN b.lo1 END, b.wt1, g.tb, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), (SELECT n FROM bt)
FROM a LEFT JOIN b ON a.k = b.k
  LEFT JOIN ref f ON f.k = a.k AND f.r = 2
  LEFT JOIN ref g ON g.k = a.k AND g.r = 3
UNION ALL
SELECT a.k, 2, '10000/24h', a.sends, a.first_t, a.last_t, a.n2, CASE WHEN a.ft2 IS NOT NULL THEN b.lo2 + 10000 END, a.ft2, f.tb, CASE WHEN a.ft2 IS NOT NULL THEN b.lo2 END, b.wt2, g.tb, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), (SELECT n FROM bt)
FROM a LEFT JOIN b ON a.k = b.k
  LEFT JOIN ref f ON f.k = a.k AND f.r = 4
  LEFT JOIN ref g ON g.k = a.k AND g.r = 5
ORDER BY 1, 2;
