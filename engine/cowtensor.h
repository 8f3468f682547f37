/* cowtensor.h — libcowtensor, a tensor runtime with copy-on-write storage.
 *
 * Include this header only.  Public symbols start with cow_ / Cow.
 */
#pragma once

#include "cow-allocator.h"
#include "cow-cuda.h"
#include "cow-device.h"
#include "cow-dtype.h"
#include "cow-error.h"
#include "cow-ipc.h"
#include "cow-lazy.h"
#include "cow-ops.h"
#include "cow-range.h"
#include "cow-storage.h"
#include "cow-tensor.h"
#include "cow-trace.h"
