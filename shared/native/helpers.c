/* What the addon's files share (part of the addon: see addon.c); declared in addon.h. */
#include "addon.h"

#include <stdio.h>
#include <string.h>

napi_value throw_errno(napi_env env, const char *syscall, int err) {
  napi_value msg, code, sys, error;
  char text[256];
  snprintf(text, sizeof text, "%s failed: %s", syscall, strerror(err));
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, NULL, msg, &error);
  napi_create_string_utf8(env, uv_err_name(-err), NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &sys);
  napi_set_named_property(env, error, "code", code);
  napi_set_named_property(env, error, "syscall", sys);
  napi_value errnum;
  napi_create_int32(env, err, &errnum);
  napi_set_named_property(env, error, "errno", errnum);
  napi_throw(env, error);
  return NULL;
}

napi_value throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, NULL, message);
  return NULL;
}

int get_string(napi_env env, napi_value v, char *buf, size_t size) {
  size_t len;
  return napi_get_value_string_utf8(env, v, buf, size, &len) == napi_ok ? (int)len : -1;
}

void call_back(napi_env env, napi_async_context async, napi_ref callback, size_t argc, const napi_value *argv) {
  napi_value cb, global, result;
  napi_get_reference_value(env, callback, &cb);
  napi_get_global(env, &global);
  if (napi_make_callback(env, async, global, cb, argc, argv, &result) == napi_pending_exception) {
    napi_value error;
    napi_get_and_clear_last_exception(env, &error);
    napi_fatal_exception(env, error);
  }
}

void define_functions(napi_env env, napi_value exports, const addon_function_t *fns, size_t count) {
  for (size_t i = 0; i < count; i++) {
    napi_property_descriptor p = {fns[i].name, NULL, fns[i].fn, NULL, NULL, NULL, napi_enumerable, NULL};
    napi_define_properties(env, exports, 1, &p);
  }
}
