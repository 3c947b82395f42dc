/* Random bytes (part of the addon: see addon.c). */
#include "addon.h"

#include <errno.h>
#include <sys/random.h>

/*
 * randomFill(buffer): fills the buffer from the kernel's CSPRNG (getrandom(2), blocking only until
 * the kernel's pool is first initialised, as at boot).
 */
static napi_value random_fill(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  void *data;
  size_t length;
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  if (argc < 1 || napi_get_buffer_info(env, argv[0], &data, &length) != napi_ok) return throw_type(env, "randomFill(buffer)");
  size_t done = 0;
  while (done < length) {
    ssize_t n = getrandom((char *)data + done, length - done, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return throw_errno(env, "getrandom", errno);
    }
    done += (size_t)n;
  }
  return NULL;
}

void define_random(napi_env env, napi_value exports) {
  static const addon_function_t fns[] = {
      {"randomFill", random_fill},
  };
  define_functions(env, exports, fns, sizeof fns / sizeof fns[0]);
}
