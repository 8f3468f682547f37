/* demo-summary.h — the summary cowscope-demo prints after its scenarios:
 * each run's outcome and counts, then a table with a total row. */
#pragma once

#include "demo-harness.h"

/* Prints the summary of @n_runs finished @runs to stdout. */
void print_summary (const Run *runs, int n_runs);
