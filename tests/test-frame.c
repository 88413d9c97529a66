/* SPDX-License-Identifier: GPL-3.0-or-later */
/* test-frame.c: the envelope parser refuses what it must, with the typed error it must. */
#include "config.h"

#include <string.h>

#include "chp-frame.h"
#include "chp-protocol-error.h"

static ChpFrame *
parse (const char *text,
       GError    **error)
{
  return chp_frame_parse (text, strlen (text), error);
}

/* The in-place reader on a private copy of @text, which it may change. */
static ChpFrame *
parse_in_place (const char *text,
                GError    **error)
{
  gsize len = strlen (text);
  /* Exactly @len bytes, no NUL: the reader must not look past the end. */
  g_autofree char *copy = g_memdup2 (text, len);

  return chp_frame_parse_in_place (copy, len, error);
}

static void
assert_refused (const char *text,
                int         code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) in_place_error = NULL;
  g_autoptr(ChpFrame) frame = parse (text, &error);
  g_autoptr(ChpFrame) in_place = parse_in_place (text, &in_place_error);

  g_assert_null (frame);
  g_assert_error (error, CHP_PROTOCOL_ERROR, code);
  /* Ending strings in place changes nothing about what is refused, or what is said. */
  g_assert_null (in_place);
  g_assert_error (in_place_error, CHP_PROTOCOL_ERROR, code);
  g_assert_cmpstr (in_place_error->message, ==, error->message);
}

static void
test_request (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(ChpFrame) frame =
    parse ("{\"type\":\"request\",\"id\":\"r1\",\"method\":\"browser.tabs\","
           "\"params\":{\"a\":1},\"timeoutMs\":5000}", &error);

  g_assert_no_error (error);
  g_assert_cmpint (frame->type, ==, CHP_FRAME_REQUEST);
  g_assert_cmpstr (frame->id, ==, "r1");
  g_assert_cmpstr (frame->method, ==, "browser.tabs");
  g_assert_cmpint (frame->timeout_ms, ==, 5000);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (frame->params));
}

static void
test_response (void)
{
  g_autoptr(ChpFrame) ok = parse ("{\"type\":\"response\",\"id\":\"r1\",\"result\":[1,2]}", NULL);
  g_autoptr(ChpFrame) err =
    parse ("{\"type\":\"response\",\"id\":\"r1\",\"error\":{\"code\":\"stale_node\","
           "\"message\":\"gone\"}}", NULL);

  g_assert_nonnull (ok);
  g_assert_null (ok->error_code);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (ok->result));
  g_assert_nonnull (err);
  g_assert_cmpstr (err->error_code, ==, "stale_node");
  g_assert_cmpstr (err->error_message, ==, "gone");

  assert_refused ("{\"type\":\"response\",\"id\":\"r1\"}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"response\",\"id\":\"r1\",\"result\":1,\"error\":{\"code\":\"x\"}}",
                  CHP_PROTOCOL_ERROR_INVALID_PARAMS);
}

static void
test_malformed (void)
{
  g_autofree char *deep = NULL;
  g_autofree char *long_id = NULL;
  GString *s = g_string_new ("{\"type\":\"event\",\"event\":\"x\",\"sequence\":1,\"data\":");

  assert_refused ("", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("[1,2]", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("\"request\"", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"id\":\"a\"}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":42}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"teleport\"}", CHP_PROTOCOL_ERROR_UNSUPPORTED);
  assert_refused ("{\"type\":\"request\",\"id\":\"\",\"method\":\"m\"}",
                  CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"request\",\"id\":7,\"method\":\"m\"}",
                  CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"request\",\"id\":\"a b\",\"method\":\"m\"}",
                  CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"request\",\"id\":\"a\",\"method\":\"m\",\"params\":[1]}",
                  CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"request\",\"id\":\"a\",\"method\":\"m\",\"timeoutMs\":-1}",
                  CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"ping\",\"sequence\":1.5}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"chunk\",\"transferId\":\"t\",\"index\":0,\"total\":0,"
                  "\"originalBytes\":1,\"data\":\"AA\"}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);

  long_id = g_strnfill (129, 'a');
  {
    g_autofree char *text = g_strdup_printf ("{\"type\":\"cancel\",\"id\":\"%s\"}", long_id);

    assert_refused (text, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  }

  /* 100,000 nested arrays would overflow json-glib's recursive parser's stack. */
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (s, '[');
  for (guint i = 0; i < 100000; i++)
    g_string_append_c (s, ']');
  g_string_append_c (s, '}');
  deep = g_string_free (s, FALSE);
  assert_refused (deep, CHP_PROTOCOL_ERROR_INVALID_PARAMS);

  /* Not UTF-8, inside strings and out: a stray byte, an overlong '/', a surrogate written as
   * UTF-8, a truncated sequence, and NUL bytes (which C strings could not carry on). */
  {
    static const struct { const char *text; gsize len; } bad[] = {
      { "{\"type\":\"cancel\",\"id\":\"\xff\"}", 0 },
      { "{\"type\":\"cancel\",\"id\":\"a\xc0\xaf\"}", 0 },
      { "{\"type\":\"cancel\",\"id\":\"\xed\xa0\x80\"}", 0 },
      { "{\"type\":\"cancel\",\"id\":\"\xe2\x82\"}", 0 },
      { "{\"type\":\"ping\",\"sequence\":1}\xff", 0 },
      { "{\xff\"type\":\"ping\",\"sequence\":1}", 0 },
      { "{\"type\":\"cancel\",\"id\":\"a\0b\"}", 28 },
      { "{\"type\":\"ping\",\"sequence\":1}\0", 29 },
    };

    for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
      {
        g_autoptr(GError) error = NULL;
        gsize len = bad[i].len ? bad[i].len : strlen (bad[i].text);
        g_autoptr(ChpFrame) frame = chp_frame_parse (bad[i].text, len, &error);

        g_assert_null (frame);
        g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
      }
  }

  /* And real UTF-8 passes through untouched. */
  {
    g_autoptr(ChpFrame) frame =
      parse ("{\"type\":\"event\",\"event\":\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\",\"sequence\":1}", NULL);

    g_assert_nonnull (frame);
    g_assert_cmpstr (frame->event, ==, "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80");
  }
}

/* What the fuzzer found in json-glib 1.6's reader and writer (tests/fuzz/crashes/ held them):
 * each is refused with a typed error, or written back as valid JSON. */
static void
test_fuzz_findings (void)
{
  g_autofree char *long_name = NULL;
  GString *name = g_string_new ("{\"type\":\"");

  /* A second top-level value (json-glib leaked it). */
  assert_refused ("{\"type\":\"ping\",\"sequence\":1}{\"a\":1}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"ping\",\"sequence\":1} x", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  /* Lone and malformed surrogates (json-glib stored invalid UTF-8, or leaked). */
  assert_refused ("{\"type\":\"cancel\",\"id\":\"\\udc00x\"}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"cancel\",\"id\":\"\\ud83d\\u0041\"}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  /* C escapes are not JSON. */
  assert_refused ("{\"type\":\"cancel\",\"id\":\"\\1\"}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  /* Out-of-range numbers: infinity, and a double past gint64 (a UB cast before). */
  assert_refused ("{\"type\":\"ping\",\"sequence\":1e400}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"ping\",\"sequence\":1e19}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);
  assert_refused ("{\"type\":\"ping\",\"sequence\":01}", CHP_PROTOCOL_ERROR_INVALID_PARAMS);

  /* An unknown type's name is quoted cut on a character boundary, so the error frame that
   * carries the message is still UTF-8. */
  for (guint i = 0; i < 40; i++)
    g_string_append (name, "\xc3\xa9");
  g_string_append (name, "\"}");
  long_name = g_string_free (name, FALSE);
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(ChpFrame) frame = parse (long_name, &error);

    g_assert_null (frame);
    g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_UNSUPPORTED);
    g_assert_true (g_utf8_validate (error->message, -1, NULL));
  }

  /* 10^21 is what JSON.stringify writes; it must come back as valid JSON, not "1e+21.0". */
  {
    g_autoptr(ChpFrame) frame = parse ("{\"type\":\"event\",\"event\":\"x\",\"sequence\":1,"
                                       "\"data\":{\"n\":1e+21}}", NULL);
    g_autofree char *text = NULL;
    g_autoptr(ChpFrame) again = NULL;

    g_assert_nonnull (frame);
    text = chp_frame_build_event ("x", frame->data, 1, 0);
    again = parse (text, NULL);
    g_assert_nonnull (again);
    g_assert_cmpfloat (json_object_get_double_member (json_node_get_object (again->data), "n"),
                       ==, 1e21);
  }
}

/* Strings with the characters the reader and writer treat specially, at every offset within
 * their sixteen- and eight-byte scans: what is written reads back the same, copied or read in
 * place. */
static void
test_string_roundtrip (void)
{
  static const char * const pieces[] = {
    "a", "Z", "0", "-", "\"", "\\", "\n", "\t", "\x01", "\x1f", " ", "/", "\x7f",
    "\xc3\xa9", "\xe4\xb8\xad", "\xf0\x9f\x98\x80",
  };
  g_autoptr(GRand) rand = g_rand_new_with_seed (20261130);

  for (guint i = 0; i < 3000; i++)
    {
      g_autoptr(GString) str = g_string_new (NULL);
      g_autoptr(JsonNode) data = NULL;
      g_autoptr(ChpFrame) frame = NULL;
      g_autoptr(ChpFrame) in_place = NULL;
      g_autofree char *text = NULL;
      /* Mostly plain runs of varied length, so a special character lands anywhere in a scan
       * word. */
      guint n = g_rand_int_range (rand, 0, 80);

      for (guint j = 0; j < n; j++)
        g_string_append (str, g_rand_int_range (rand, 0, 4) > 0
                              ? "a"
                              : pieces[g_rand_int_range (rand, 0, G_N_ELEMENTS (pieces))]);

      data = json_node_init_string (json_node_alloc (), str->str);
      text = chp_frame_build_event (str->str, data, 1, 0);
      frame = parse (text, NULL);
      g_assert_nonnull (frame);
      g_assert_cmpstr (frame->event, ==, str->str);
      g_assert_cmpstr (json_node_get_string (frame->data), ==, str->str);
      in_place = parse_in_place (text, NULL);
      g_assert_nonnull (in_place);
      g_assert_cmpstr (in_place->event, ==, str->str);
      g_assert_true (json_node_equal (in_place->root, frame->root));
    }
}

/* One byte the string scan must stop at, at every offset of a run long enough for the wide
 * scan: a raw control character or a byte that is not UTF-8 is refused wherever it sits. */
static void
test_string_scan_offsets (void)
{
  static const char * const refused[] = { "\x01", "\x1f", "\n", "\xff", "\xc3(", "\x80" };

  for (guint len = 0; len < 70; len++)
    for (guint at = 0; at <= len; at++)
      for (guint k = 0; k < G_N_ELEMENTS (refused); k++)
        {
          g_autoptr(GString) text = g_string_new ("{\"type\":\"event\",\"event\":\"e\","
                                                  "\"sequence\":1,\"data\":\"");
          g_autoptr(GError) error = NULL;
          g_autoptr(ChpFrame) frame = NULL;

          for (guint i = 0; i < len; i++)
            {
              if (i == at)
                g_string_append (text, refused[k]);
              g_string_append_c (text, 'a');
            }
          if (at == len)
            g_string_append (text, refused[k]);
          g_string_append (text, "\"}");

          frame = parse (text->str, &error);
          g_assert_null (frame);
          g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
          g_clear_error (&error);
          frame = parse_in_place (text->str, &error);
          g_assert_null (frame);
          g_assert_error (error, CHP_PROTOCOL_ERROR, CHP_PROTOCOL_ERROR_INVALID_PARAMS);
        }
}

/* The in-place reader gives the frame of the copying one; the frame keeps nothing of the text. */
static void
test_in_place (void)
{
  static const char * const texts[] = {
    ("{\"type\":\"request\",\"id\":\"e-1\",\"method\":\"m\",\"params\":{\"a\":\"x\\\"y\","
     "\"b\":[\"\",\"\\u00e9\",\"\xc3\xa9\"],\"c\":{\"d\":null}},\"timeoutMs\":5}"),
    "{\"type\":\"response\",\"id\":\"e-2\",\"result\":\"plain\"}",
    "{\"id\":\"e-3\",\"error\":{\"code\":\"busy\",\"message\":\"m\\n\"},\"type\":\"response\"}",
    "{\"type\":\"event\",\"event\":\"tab\",\"sequence\":4,\"data\":\"a\",\"data\":{\"k\":1}}",
  };

  for (guint i = 0; i < G_N_ELEMENTS (texts); i++)
    {
      gsize len = strlen (texts[i]);
      g_autofree char *copy = g_memdup2 (texts[i], len);
      g_autoptr(ChpFrame) frame = parse (texts[i], NULL);
      g_autoptr(ChpFrame) in_place = chp_frame_parse_in_place (copy, len, NULL);
      g_autofree char *a = NULL, *b = NULL;

      g_assert_nonnull (frame);
      g_assert_nonnull (in_place);
      /* Scribbled over and freed: nothing in the frame may point into it. */
      memset (copy, '#', len);
      g_clear_pointer (&copy, g_free);
      g_assert_cmpint (in_place->type, ==, frame->type);
      g_assert_cmpstr (in_place->id, ==, frame->id);
      g_assert_true (json_node_equal (in_place->root, frame->root));
      a = chp_json_to_string (frame->root);
      b = chp_json_to_string (in_place->root);
      g_assert_cmpstr (a, ==, b);
    }
}

static void
test_builders_roundtrip (void)
{
  g_autoptr(JsonNode) params = json_from_string ("{\"q\":\"a\\nb\\\"c\"}", NULL);
  g_autofree char *text = chp_frame_build_request ("x-1", "engine.info", params, 30);
  g_autoptr(ChpFrame) frame = parse (text, NULL);
  g_autofree char *err = chp_frame_build_error_response ("x-2", "busy", "too many");
  g_autoptr(ChpFrame) eframe = parse (err, NULL);
  g_autofree char *pong = chp_frame_build_pong (3, 10, 11);
  g_autoptr(ChpFrame) pframe = parse (pong, NULL);

  g_assert_nonnull (frame);
  g_assert_cmpstr (frame->method, ==, "engine.info");
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (frame->params), "q"), ==,
                   "a\nb\"c");
  g_assert_cmpstr (eframe->error_code, ==, "busy");
  g_assert_cmpint (pframe->sequence, ==, 3);
  g_assert_cmpint (pframe->reply_timestamp, ==, 11);
}

static void
test_error_table (void)
{
  ChpProtocolError code;

  g_assert_cmpstr (chp_protocol_error_to_string (CHP_PROTOCOL_ERROR_STALE_DOCUMENT), ==,
                   "stale_document");
  g_assert_true (chp_protocol_error_from_string ("refused_floor", &code));
  g_assert_cmpint (code, ==, CHP_PROTOCOL_ERROR_REFUSED_FLOOR);
  g_assert_false (chp_protocol_error_from_string ("nope", &code));
  g_assert_cmpint (CHP_PROTOCOL_ERROR_N_CODES, ==, 27);
  g_assert_true (chp_protocol_error_from_string ("policy_denied", &code));
  g_assert_cmpint (code, ==, CHP_PROTOCOL_ERROR_POLICY_DENIED);

  for (guint i = 0; i < CHP_PROTOCOL_ERROR_N_CODES; i++)
    {
      g_assert_true (chp_protocol_error_from_string (chp_protocol_error_to_string (i), &code));
      g_assert_cmpint (code, ==, i);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/chaperone/frame/request", test_request);
  g_test_add_func ("/chaperone/frame/response", test_response);
  g_test_add_func ("/chaperone/frame/malformed", test_malformed);
  g_test_add_func ("/chaperone/frame/builders", test_builders_roundtrip);
  g_test_add_func ("/chaperone/frame/fuzz-findings", test_fuzz_findings);
  g_test_add_func ("/chaperone/frame/string-roundtrip", test_string_roundtrip);
  g_test_add_func ("/chaperone/frame/string-scan-offsets", test_string_scan_offsets);
  g_test_add_func ("/chaperone/frame/in-place", test_in_place);
  g_test_add_func ("/chaperone/frame/error-table", test_error_table);

  return g_test_run ();
}
