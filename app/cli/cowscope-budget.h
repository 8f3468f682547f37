/* cowscope-budget.h — `--fail-if` budgets: "METRIC OP NUMBER", for
 * `report` and `diff` alike.
 *
 * OP is one of > >= < <= == !=.  NUMBER is an integer or decimal,
 * optionally negative, with an optional suffix K M G T (powers of 1000)
 * or Ki Mi Gi Ti (powers of 1024), optionally followed by B:
 * "copied_bytes > 64Mi", "violations != 0", "lock_wait_ns >= 1.5M".
 * Where the command gives each metric a base (`diff`: the BEFORE value),
 * NUMBER may instead end in % and is then a percentage of the base:
 * "copied_bytes.increase > 5%".  A budget is *exceeded* when the
 * comparison holds.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  COWSCOPE_BUDGET_GT,
  COWSCOPE_BUDGET_GE,
  COWSCOPE_BUDGET_LT,
  COWSCOPE_BUDGET_LE,
  COWSCOPE_BUDGET_EQ,
  COWSCOPE_BUDGET_NE,
} CowscopeBudgetOp;

typedef struct {
  char *metric;
  CowscopeBudgetOp op;
  gint64 limit;          /* when not a percentage */
  gboolean percent;      /* NUMBER ended in %: the limit is limit_percent */
  double limit_percent;
} CowscopeBudget;

/* The metric names a budget may use (NULL-terminated, static): the
 * report's metrics (cowscope_report_metrics()). */
const char *const *cowscope_budget_metrics (void);

/* Parses @expression against the report's metrics, without percentages.
 * NULL with @error (G_OPTION_ERROR_BAD_VALUE) naming the problem when it
 * is malformed or names an unknown metric. */
CowscopeBudget *cowscope_budget_parse (const char *expression, GError **error);

/* The same against @metrics (NULL-terminated; names may contain dots),
 * taking percentages when @percent_allowed; @known_hint lists the
 * metrics in the unknown-metric message (NULL: all of @metrics). */
CowscopeBudget *cowscope_budget_parse_for (const char *expression, const char *const *metrics,
                                           gboolean percent_allowed, const char *known_hint,
                                           GError **error);

void cowscope_budget_free (CowscopeBudget *budget);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeBudget, cowscope_budget_free)

/* The operator as written: ">", ">=", ... */
const char *cowscope_budget_op_symbol (CowscopeBudgetOp op);

/* TRUE when @value exceeds the budget (the comparison holds); a
 * percentage budget is never exceeded here (it needs a base). */
gboolean cowscope_budget_exceeded (const CowscopeBudget *budget, gint64 value);

/* TRUE when @value exceeds the budget, a percentage taken of @base (a
 * base of 0 makes any positive value infinitely many percent, any
 * negative one minus that). */
gboolean cowscope_budget_exceeded_relative (const CowscopeBudget *budget, gint64 value,
                                            gint64 base);

/* "copied_bytes.increase = 4194304 (50.0% of 8388608) > 5%": why
 * @budget was exceeded by @value of @base, for the exit message. */
char *cowscope_budget_describe (const CowscopeBudget *budget, gint64 value, gint64 base);

G_END_DECLS
