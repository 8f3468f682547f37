/* demo-scenarios.h — the scenarios of cowscope-demo, one a file
 * (demo-SCENARIO.c), each run by the harness with a Run to fill in. */
#pragma once

#include "demo-harness.h"

/* The defaults --help states; --steps and --threads override them. */
#define DEFAULT_TRAINING_STEPS 8
#define DEFAULT_CONCURRENT_ROUNDS 4
#define DEFAULT_THREADS 4

void scenario_training (Run *run);
void scenario_concurrent (Run *run);
void scenario_simulate (Run *run);
void scenario_foreign (Run *run);
void scenario_ipc (Run *run);
void scenario_gpu (Run *run);

/* The consumer process of the ipc scenario, started as
 * `cowscope-demo --ipc-consumer FD`; returns its exit status. */
int ipc_consumer_main (int sock);
