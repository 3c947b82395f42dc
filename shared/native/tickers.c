/*
 * Tickers (part of the addon: see addon.c): repeating timers on the event loop whose ticks run
 * no JavaScript, for the watchdogs (supervisor/watchdog.ts).
 *
 * A watchdog's touch and look run all the time, ten times a second by default, in every process
 * of the tree. As JavaScript timers they kept an idle process's JavaScript running, and after a
 * minute or two V8 had optimised Node's timer functions and the watchdog's check on its
 * optimising compiler, whose code (3 MB of the Node binary) and threads' heaps then stayed
 * resident for the process's life. A ticker's tick is a libuv timer callback in C: it proves the
 * loop turned as well as a JavaScript timer would (it runs on the same loop, between the same
 * callbacks), and calls into JavaScript only when something is late.
 *
 * startTicker(options, onLate?) -> handle; each tick:
 *  - `beat` (an Int32Array): its element 0 is incremented, atomically (a worker's heartbeat
 *    counter in memory the supervisor maps);
 *  - `stamp` (a Float64Array): its element 0 is set to the wall clock's milliseconds (read by a
 *    helper thread that aborts the process when the loop stops);
 *  - `counts`, `seen` (Int32Arrays) and `last` (a Float64Array), all of one length: each counter
 *    that moved since `seen` is copied to `seen` and its time written to `last`; an index whose
 *    `last` is 0 is not watched (JavaScript sets it to 0 to forget one, with `seen` set to the
 *    counter's value then);
 *  - `onLate(now, ownLate)` is called when the tick itself came more than `thresholdMs` after it
 *    was due (`ownLate`), when a watched counter has not moved for more than `thresholdMs`, and
 *    once more on the first tick after either stops. `now` and `last` are milliseconds on libuv's
 *    monotonic clock (uv_hrtime), which only their differences mean anything in.
 * stopTicker(handle) stops it. A ticker does not keep the loop alive, and runs until stopped
 * (as a setInterval does, whether or not its handle is kept).
 */
#include "addon.h"

#include <stdlib.h>
#include <sys/time.h>

typedef struct {
  uv_timer_t timer;
  napi_env env;
  uint64_t interval_ms;
  double threshold_ms;
  int32_t *beat;
  double *stamp;
  int32_t *counts;
  int32_t *seen;
  double *last;
  size_t watched;
  /* References that keep the arrays above (and the callback) alive while the timer runs. */
  napi_ref refs[5];
  size_t ref_count;
  napi_ref callback;
  napi_async_context async;
  double previous;
  bool was_late;
  bool stopped;
  bool closed;
  bool finalized;
} ticker_t;

/* Tells a ticker's handle from any other external. */
static const napi_type_tag TICKER_TAG = {0x7469636b65727321ULL, 0x70726f78792d7631ULL};

static double now_ms(void) {
  return (double)uv_hrtime() / 1e6;
}

static void call_late(ticker_t *t, double now, double own_late) {
  napi_env env = t->env;
  napi_handle_scope scope;
  napi_open_handle_scope(env, &scope);
  napi_value argv[2];
  napi_create_double(env, now, &argv[0]);
  napi_create_double(env, own_late, &argv[1]);
  call_back(env, t->async, t->callback, 2, argv);
  napi_close_handle_scope(env, scope);
}

static void on_tick(uv_timer_t *timer) {
  ticker_t *t = (ticker_t *)timer->data;
  double now = now_ms();
  double own_late = now - t->previous - (double)t->interval_ms;
  t->previous = now;
  if (t->beat) __atomic_fetch_add(t->beat, 1, __ATOMIC_RELAXED);
  if (t->stamp) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    *t->stamp = (double)tv.tv_sec * 1e3 + (double)tv.tv_usec / 1e3;
  }
  bool late = t->threshold_ms > 0 && own_late > t->threshold_ms;
  for (size_t i = 0; i < t->watched; i++) {
    int32_t count = __atomic_load_n(&t->counts[i], __ATOMIC_RELAXED);
    if (count != t->seen[i]) {
      t->seen[i] = count;
      t->last[i] = now;
    } else if (t->last[i] > 0 && t->threshold_ms > 0 && now - t->last[i] > t->threshold_ms) {
      late = true;
    }
  }
  if (t->callback && (late || t->was_late)) call_late(t, now, own_late);
  t->was_late = late;
}

static void on_closed(uv_handle_t *handle) {
  ticker_t *t = (ticker_t *)handle->data;
  for (size_t i = 0; i < t->ref_count; i++) napi_delete_reference(t->env, t->refs[i]);
  if (t->callback) napi_delete_reference(t->env, t->callback);
  napi_async_destroy(t->env, t->async);
  t->closed = true;
  if (t->finalized) free(t);
}

static void ticker_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  ticker_t *t = (ticker_t *)data;
  t->finalized = true;
  if (t->closed) free(t);
}

/* The typed array at options[name] (undefined: NULL, length 0); its elements must be of `type`. Returns false if it is something else. */
static bool typed_array(napi_env env, napi_value options, const char *name, napi_typedarray_type type, ticker_t *t, void **data, size_t *length) {
  napi_value value;
  napi_valuetype kind;
  *data = NULL;
  *length = 0;
  if (napi_get_named_property(env, options, name, &value) != napi_ok || napi_typeof(env, value, &kind) != napi_ok) return false;
  if (kind == napi_undefined) return true;
  bool is_typed;
  napi_is_typedarray(env, value, &is_typed);
  if (!is_typed) return false;
  napi_typedarray_type actual;
  napi_value buffer;
  size_t offset;
  if (napi_get_typedarray_info(env, value, &actual, length, data, &buffer, &offset) != napi_ok || actual != type || *length == 0) return false;
  napi_create_reference(env, value, 1, &t->refs[t->ref_count++]);
  return true;
}

static napi_value start_ticker(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  static const char *usage = "startTicker({ intervalMs > 0, thresholdMs?, beat?: Int32Array, stamp?: Float64Array, counts?, seen?: Int32Array, last?: Float64Array }, onLate?)";
  napi_valuetype kind = napi_undefined;
  if (argc < 1 || napi_typeof(env, argv[0], &kind) != napi_ok || kind != napi_object) return throw_type(env, usage);
  napi_value v;
  double interval = 0, threshold = 0;
  if (napi_get_named_property(env, argv[0], "intervalMs", &v) != napi_ok || napi_get_value_double(env, v, &interval) != napi_ok || !(interval >= 1 && interval <= 2147483647))
    return throw_type(env, usage);
  napi_valuetype threshold_kind;
  if (napi_get_named_property(env, argv[0], "thresholdMs", &v) == napi_ok && napi_typeof(env, v, &threshold_kind) == napi_ok && threshold_kind != napi_undefined &&
      (napi_get_value_double(env, v, &threshold) != napi_ok || threshold < 0))
    return throw_type(env, usage);
  napi_valuetype callback_kind = napi_undefined;
  if (argc >= 2 && (napi_typeof(env, argv[1], &callback_kind) != napi_ok || (callback_kind != napi_function && callback_kind != napi_undefined)))
    return throw_type(env, usage);

  ticker_t *t = calloc(1, sizeof *t);
  t->env = env;
  t->interval_ms = (uint64_t)interval;
  t->threshold_ms = threshold;
  void *beat, *stamp, *counts, *seen, *last;
  size_t beat_n, stamp_n, counts_n, seen_n, last_n;
  bool ok = typed_array(env, argv[0], "beat", napi_int32_array, t, &beat, &beat_n) && typed_array(env, argv[0], "stamp", napi_float64_array, t, &stamp, &stamp_n) &&
            typed_array(env, argv[0], "counts", napi_int32_array, t, &counts, &counts_n) && typed_array(env, argv[0], "seen", napi_int32_array, t, &seen, &seen_n) &&
            typed_array(env, argv[0], "last", napi_float64_array, t, &last, &last_n) && counts_n == seen_n && counts_n == last_n;
  if (!ok) {
    for (size_t i = 0; i < t->ref_count; i++) napi_delete_reference(env, t->refs[i]);
    free(t);
    return throw_type(env, usage);
  }
  t->beat = beat;
  t->stamp = stamp;
  t->counts = counts;
  t->seen = seen;
  t->last = last;
  t->watched = counts_n;
  if (callback_kind == napi_function) napi_create_reference(env, argv[1], 1, &t->callback);
  napi_value name;
  napi_create_string_utf8(env, "proxy:ticker", NAPI_AUTO_LENGTH, &name);
  napi_async_init(env, NULL, name, &t->async);
  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  uv_timer_init(loop, &t->timer);
  t->timer.data = t;
  t->previous = now_ms();
  uv_timer_start(&t->timer, on_tick, t->interval_ms, t->interval_ms);
  uv_unref((uv_handle_t *)&t->timer);
  napi_value handle;
  napi_create_external(env, t, ticker_finalize, NULL, &handle);
  napi_type_tag_object(env, handle, &TICKER_TAG);
  return handle;
}

static napi_value stop_ticker(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *data = NULL;
  napi_valuetype kind = napi_undefined;
  bool tagged = false;
  if (argc < 1 || napi_typeof(env, argv[0], &kind) != napi_ok || kind != napi_external || napi_check_object_type_tag(env, argv[0], &TICKER_TAG, &tagged) != napi_ok || !tagged ||
      napi_get_value_external(env, argv[0], &data) != napi_ok)
    return throw_type(env, "stopTicker(handle)");
  ticker_t *t = (ticker_t *)data;
  if (!t->stopped) {
    t->stopped = true;
    uv_timer_stop(&t->timer);
    uv_close((uv_handle_t *)&t->timer, on_closed);
  }
  return NULL;
}

void define_tickers(napi_env env, napi_value exports) {
  static const addon_function_t fns[] = {
      {"startTicker", start_ticker},
      {"stopTicker", stop_ticker},
  };
  define_functions(env, exports, fns, sizeof fns / sizeof fns[0]);
}
