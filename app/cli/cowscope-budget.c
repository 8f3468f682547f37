/* cowscope-budget.c — parses and checks `--fail-if` budgets. */
#include "cowscope-budget.h"

#include "cowscope-report.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* User-visible messages (untranslated for now), in one place. */
#define MSG_EMPTY        "empty --fail-if expression (expected METRIC OP NUMBER, e.g. 'copied_bytes > 64Mi')"
#define MSG_NO_METRIC    "--fail-if '%s': expected a metric name first (METRIC OP NUMBER)"
#define MSG_UNKNOWN      "--fail-if '%s': unknown metric '%s' (known: %s)"
#define MSG_NO_OP        "--fail-if '%s': expected an operator (> >= < <= == !=) after '%s'"
#define MSG_NO_NUMBER    "--fail-if '%s': expected a number after '%s'"
#define MSG_BAD_SUFFIX   "--fail-if '%s': unknown unit '%s' (use K, M, G, T, Ki, Mi, Gi or Ti)"
#define MSG_RANGE        "--fail-if '%s': the number is out of range"
#define MSG_NO_PERCENT   "--fail-if '%s': a percentage needs a base to be taken of; only 'cowscope-cli diff' budgets have one"
#define MSG_UNIT_PERCENT "--fail-if '%s': a percentage takes no other unit"

static const struct {
  const char *symbol;
  CowscopeBudgetOp op;
} operators[] = {
  /* Two-character operators first so that ">=" is not read as ">". */
  { ">=", COWSCOPE_BUDGET_GE }, { "<=", COWSCOPE_BUDGET_LE },
  { "==", COWSCOPE_BUDGET_EQ }, { "!=", COWSCOPE_BUDGET_NE },
  { ">", COWSCOPE_BUDGET_GT },  { "<", COWSCOPE_BUDGET_LT },
};

static const struct {
  const char *suffix;
  double factor;
} suffixes[] = {
  { "", 1.0 },
  { "K", 1e3 }, { "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 },
  { "Ki", 1024.0 }, { "Mi", 1048576.0 }, { "Gi", 1073741824.0 },
  { "Ti", 1099511627776.0 },
};

const char *const *
cowscope_budget_metrics (void)
{
  return cowscope_report_metrics ();
}

const char *
cowscope_budget_op_symbol (CowscopeBudgetOp op)
{
  for (gsize i = 0; i < G_N_ELEMENTS (operators); i++)
    if (operators[i].op == op)
      return operators[i].symbol;
  return "?";
}

/* The unit factor of @suffix ("Mi", "MiB", "K", "" ...), or 0 if unknown. */
static double
suffix_factor (const char *suffix)
{
  g_autofree char *unit = g_strdup (suffix);
  gsize len = strlen (unit);

  if (len > 0 && unit[len - 1] == 'B')
    unit[len - 1] = '\0';
  for (gsize i = 0; i < G_N_ELEMENTS (suffixes); i++)
    if (strcmp (unit, suffixes[i].suffix) == 0)
      return suffixes[i].factor;
  return 0.0;
}

CowscopeBudget *
cowscope_budget_parse (const char *expression, GError **error)
{
  return cowscope_budget_parse_for (expression, cowscope_report_metrics (), FALSE, NULL, error);
}

CowscopeBudget *
cowscope_budget_parse_for (const char *expression, const char *const *metrics,
                           gboolean percent_allowed, const char *known_hint, GError **error)
{
  g_autoptr (CowscopeBudget) budget = g_new0 (CowscopeBudget, 1);
  const char *p = expression, *start;
  gboolean found = FALSE;
  char *end = NULL;
  double number, factor;

  while (g_ascii_isspace (*p))
    p++;
  if (*p == '\0')
    {
      g_set_error_literal (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                           MSG_EMPTY);
      return NULL;
    }

  start = p;
  while (g_ascii_isalnum (*p) || *p == '_' || *p == '.')
    p++;
  if (p == start)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   MSG_NO_METRIC, expression);
      return NULL;
    }
  budget->metric = g_strndup (start, p - start);
  for (gsize i = 0; metrics[i] != NULL; i++)
    found = found || strcmp (metrics[i], budget->metric) == 0;
  if (!found)
    {
      g_autofree char *known = known_hint != NULL ? g_strdup (known_hint)
                                                  : g_strjoinv (", ", (char **) metrics);
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   MSG_UNKNOWN, expression, budget->metric, known);
      return NULL;
    }

  while (g_ascii_isspace (*p))
    p++;
  found = FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS (operators) && !found; i++)
    if (strncmp (p, operators[i].symbol, strlen (operators[i].symbol)) == 0)
      {
        budget->op = operators[i].op;
        p += strlen (operators[i].symbol);
        found = TRUE;
      }
  if (!found)
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_NO_OP,
                   expression, budget->metric);
      return NULL;
    }

  while (g_ascii_isspace (*p))
    p++;
  if (!(g_ascii_isdigit (*p) || ((*p == '-' || *p == '.') && p[1] != '\0')))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   MSG_NO_NUMBER, expression,
                   cowscope_budget_op_symbol (budget->op));
      return NULL;
    }
  errno = 0;
  number = g_ascii_strtod (p, &end);
  if (end == p || errno == ERANGE || !isfinite (number))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   MSG_NO_NUMBER, expression,
                   cowscope_budget_op_symbol (budget->op));
      return NULL;
    }
  {
    g_autofree char *suffix = g_strstrip (g_strdup (end));
    /* strtod also reads "inf", "nan" and hex: accept only plain digits. */
    for (const char *q = p; q < end; q++)
      if (!(g_ascii_isdigit (*q) || *q == '.' || *q == '-'))
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       MSG_NO_NUMBER, expression,
                       cowscope_budget_op_symbol (budget->op));
          return NULL;
        }
    gsize len = strlen (suffix);
    if (len > 0 && suffix[len - 1] == '%')
      {
        if (!percent_allowed)
          {
            g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_NO_PERCENT,
                         expression);
            return NULL;
          }
        if (len > 1)
          {
            g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_UNIT_PERCENT,
                         expression);
            return NULL;
          }
        budget->percent = TRUE;
        budget->limit_percent = number;
        return g_steal_pointer (&budget);
      }
    factor = suffix_factor (suffix);
    if (factor == 0.0)
      {
        g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                     MSG_BAD_SUFFIX, expression, suffix);
        return NULL;
      }
  }
  number = round (number * factor);
  if (!(number > -9.2e18 && number < 9.2e18))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, MSG_RANGE,
                   expression);
      return NULL;
    }
  budget->limit = (gint64) number;
  return g_steal_pointer (&budget);
}

void
cowscope_budget_free (CowscopeBudget *budget)
{
  if (budget == NULL)
    return;
  g_free (budget->metric);
  g_free (budget);
}

/* TRUE when @a OP @b. */
static gboolean
compare (CowscopeBudgetOp op, double a, double b)
{
  switch (op)
    {
    case COWSCOPE_BUDGET_GT: return a > b;
    case COWSCOPE_BUDGET_GE: return a >= b;
    case COWSCOPE_BUDGET_LT: return a < b;
    case COWSCOPE_BUDGET_LE: return a <= b;
    case COWSCOPE_BUDGET_EQ: return a == b;
    case COWSCOPE_BUDGET_NE: return a != b;
    default: return FALSE;
    }
}

/* @value as a percentage of @base. */
static double
percent_of (gint64 value, gint64 base)
{
  if (base == 0)
    return value == 0 ? 0.0 : value > 0 ? INFINITY : -INFINITY;
  return (double) value * 100.0 / (double) base;
}

gboolean
cowscope_budget_exceeded_relative (const CowscopeBudget *budget, gint64 value, gint64 base)
{
  if (!budget->percent)
    return cowscope_budget_exceeded (budget, value);
  return compare (budget->op, percent_of (value, base), budget->limit_percent);
}

char *
cowscope_budget_describe (const CowscopeBudget *budget, gint64 value, gint64 base)
{
  if (!budget->percent)
    return g_strdup_printf ("%s = %" G_GINT64_FORMAT " %s %" G_GINT64_FORMAT, budget->metric,
                            value, cowscope_budget_op_symbol (budget->op), budget->limit);
  if (base == 0)
    return g_strdup_printf ("%s = %" G_GINT64_FORMAT " (of 0: %s) %s %g%%", budget->metric, value,
                            value == 0 ? "0%" : "unbounded",
                            cowscope_budget_op_symbol (budget->op), budget->limit_percent);
  return g_strdup_printf ("%s = %" G_GINT64_FORMAT " (%.1f%% of %" G_GINT64_FORMAT ") %s %g%%",
                          budget->metric, value, percent_of (value, base), base,
                          cowscope_budget_op_symbol (budget->op), budget->limit_percent);
}

gboolean
cowscope_budget_exceeded (const CowscopeBudget *budget, gint64 value)
{
  if (budget->percent)
    return FALSE;
  switch (budget->op)
    {
    case COWSCOPE_BUDGET_GT: return value > budget->limit;
    case COWSCOPE_BUDGET_GE: return value >= budget->limit;
    case COWSCOPE_BUDGET_LT: return value < budget->limit;
    case COWSCOPE_BUDGET_LE: return value <= budget->limit;
    case COWSCOPE_BUDGET_EQ: return value == budget->limit;
    case COWSCOPE_BUDGET_NE: return value != budget->limit;
    default: return FALSE;
    }
}
