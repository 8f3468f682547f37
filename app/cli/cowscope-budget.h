/* cowscope-budget.h — `--fail-if` budgets: "METRIC OP NUMBER".
 *
 * OP is one of > >= < <= == !=.  NUMBER is an integer or decimal,
 * optionally negative, with an optional suffix K M G T (powers of 1000)
 * or Ki Mi Gi Ti (powers of 1024), optionally followed by B:
 * "copied_bytes > 64Mi", "violations != 0", "lock_wait_ns >= 1.5M".
 * A budget is *exceeded* when the comparison holds.
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
  gint64 limit;
} CowscopeBudget;

/* The metric names a budget may use (NULL-terminated, static): the
 * report's metrics (cowscope_report_metrics()). */
const char *const *cowscope_budget_metrics (void);

/* Parses @expression.  NULL with @error (G_OPTION_ERROR_BAD_VALUE) naming
 * the problem when it is malformed or names an unknown metric. */
CowscopeBudget *cowscope_budget_parse (const char *expression, GError **error);

void cowscope_budget_free (CowscopeBudget *budget);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CowscopeBudget, cowscope_budget_free)

/* The operator as written: ">", ">=", ... */
const char *cowscope_budget_op_symbol (CowscopeBudgetOp op);

/* TRUE when @value exceeds the budget (the comparison holds). */
gboolean cowscope_budget_exceeded (const CowscopeBudget *budget, gint64 value);

G_END_DECLS
