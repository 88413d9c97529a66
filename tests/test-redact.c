/* test-redact.c: the app's redaction pass. Each row is page text an agent could be handed,
 * with what the agent must see instead: a secret that comes through is a leak, and ordinary
 * text that gets masked is a page the agent can no longer read. Every row is also redacted a
 * second time, which must change nothing. */
#include "config.h"

#include <string.h>

#include "chp-redact.h"

typedef struct
{
  const char *in;
  const char *out;
  guint count;
} RedactCase;

#define JWT "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." \
            "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"

static const RedactCase CASES[] = {
  /* Headers: the whole value, at a line start. */
  { "Cookie: sid=abc; theme=dark", "Cookie: [redacted Cookie len=19]", 1 },
  { "Set-Cookie: id=a3fWa; Path=/; HttpOnly", "Set-Cookie: [redacted Set-Cookie len=26]", 1 },
  { "Authorization: Basic dXNlcjpwYXNz", "Authorization: [redacted Authorization len=18]", 1 },
  { "  proxy-authorization:   Digest abc  ",
    "  proxy-authorization:   [redacted proxy-authorization len=10]  ", 1 },
  { "X-Api-Key: 12345abcde", "X-Api-Key: [redacted X-Api-Key len=10]", 1 },
  { "X-CSRF-Token: Zk3Q", "X-CSRF-Token: [redacted X-CSRF-Token len=4]", 1 },
  { "Accept: text/html\r\nCookie: a=b\r\nHost: x",
    "Accept: text/html\r\nCookie: [redacted Cookie len=3]\r\nHost: x", 1 },
  { "curl -H 'Authorization: token abc' https://x",
    "curl -H 'Authorization: [redacted Authorization len=9]' https://x", 1 },

  /* JWTs, bearer tokens. */
  { "id " JWT " end", "id [redacted jwt len=108] end", 1 },
  { "(" JWT ").", "([redacted jwt len=108]).", 1 },
  { "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0. next", "[redacted jwt len=36] next", 1 },
  { "eyJhbGciOi is just a prefix", "eyJhbGciOi is just a prefix", 0 },
  { "use Bearer abc123.def-456 now", "use Bearer [redacted bearer len=14] now", 1 },
  { "bearer   dGhpcyBpcyBhIHRva2Vu==", "bearer   [redacted bearer len=22]", 1 },
  { "The Bearer of bad news; Bearer instruments", "The Bearer of bad news; Bearer instruments",
    0 },
  { "Basic authentication is weak", "Basic authentication is weak", 0 },

  /* API key shapes. */
  { "key: sk-proj-abcdefghijklmnopqrstuvwx", "key: [redacted api_key len=32]", 1 },
  { "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "[redacted stripe_key len=32]", 1 },
  { "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "[redacted github_token len=40]", 1 },
  { "github_pat_11ABCDEFG0abcdefghijklmnopqrstuvwxyz", "[redacted github_token len=47]", 1 },
  { "xoxb-123456789012-abcdefghij", "[redacted slack_token len=28]", 1 },
  { "AKIAIOSFODNN7EXAMPLE", "[redacted aws_key len=20]", 1 },
  { "AIzaSyA1bcdefghijklmnopqrstuvwxyz0123-_", "[redacted google_api_key len=39]", 1 },
  { "glpat-abcdefghij0123456789", "[redacted gitlab_token len=26]", 1 },
  { "pip install sk-learn; task-abcdefghijklmnopqrstuvwxyz",
    "pip install sk-learn; task-abcdefghijklmnopqrstuvwxyz", 0 },
  { "ASIANCOUNTRIESABCDE and AKIA1234", "ASIANCOUNTRIESABCDE and AKIA1234", 0 },

  /* name=value: query strings, cookies, form bodies. */
  { "https://x.test/cb?access_token=abc123&state=xyz#f",
    "https://x.test/cb?access_token=[redacted access_token len=6]&state=xyz#f", 1 },
  { "?session_id=9f8e&lang=en", "?session_id=[redacted session_id len=4]&lang=en", 1 },
  { "sid=abc123; theme=dark; PHPSESSID=q1w2e3",
    "sid=[redacted sid len=6]; theme=dark; PHPSESSID=[redacted PHPSESSID len=6]", 2 },
  { "user[password]=hunter2&user[email]=a@b.c",
    "user[password]=[redacted user_password len=7]&user[email]=a@b.c", 1 },
  { "csrfmiddlewaretoken=Zk3Q&next=/",
    "csrfmiddlewaretoken=[redacted csrfmiddlewaretoken len=4]&next=/", 1 },
  { "authenticity_token=\"a+b/c==\"", "authenticity_token=\"[redacted authenticity_token len=7]\"",
    1 },
  { "api_key = 'abc 123'", "api_key = '[redacted api_key len=7]'", 1 },
  { "client_secret=s3cr3t&grant_type=x",
    "client_secret=[redacted client_secret len=6]&grant_type=x", 1 },
  { "X-Amz-Signature=abcdef0123&X-Amz-Date=2024",
    "X-Amz-Signature=[redacted X-Amz-Signature len=10]&X-Amz-Date=2024", 1 },
  { "otp=123456 pin=0000 cvv=123",
    "otp=[redacted otp len=6] pin=[redacted pin len=4] cvv=[redacted cvv len=3]", 3 },
  { "[token=abc]", "[token=[redacted token len=3]]", 1 },
  { "a&amp;token=abc", "a&amp;token=[redacted token len=3]", 1 },
  { "token=", "token=", 0 },

  /* Lengths are characters, not bytes. */
  { "pass=\xc3\xa9t\xc3\xa9\xf0\x9f\x99\x82x", "pass=[redacted pass len=5]", 1 },
  { "password: \xe5\xaf\x86\xe7\xa0\x81\xe5\xaf\x86\xe7\xa0\x81\xe5\xaf\x86\xe7\xa0\x81x1",
    "password: [redacted password len=8]", 1 },

  /* name: value outside headers: one secret-looking token ending its line. */
  { "password: hunter22", "password: [redacted password len=8]", 1 },
  { "token: 'abc def'", "token: '[redacted token len=7]'", 1 },
  { "Password: must be 8 characters", "Password: must be 8 characters", 0 },
  { "Password: required", "Password: required", 0 },
  { "Session: 2024-25 season", "Session: 2024-25 season", 0 },
  { "Token::from_str(x)", "Token::from_str(x)", 0 },
  { "This site uses a cookie: it remembers you", "This site uses a cookie: it remembers you", 0 },

  /* Quoted members in JSON or dict text. */
  { "{\"apiKey\": \"abcd\\\"ef\", \"name\":\"x\", \"pin\": 1234}",
    "{\"apiKey\": \"[redacted apiKey len=8]\", \"name\":\"x\", \"pin\": [redacted pin len=4]}", 2 },
  { "{'password' => 'hunter2'}", "{'password' => '[redacted password len=7]'}", 1 },
  { "{\"tokenType\": \"Bearer\", \"passwordHint\": \"pet\"}",
    "{\"tokenType\": \"Bearer\", \"passwordHint\": \"pet\"}", 0 },
  { "{\"password\": true, \"secret\": null}", "{\"password\": true, \"secret\": null}", 0 },
  { "\"password\": \"unterminated secret\n next",
    "\"password\": \"[redacted password len=19]\n next", 1 },

  /* A secret word and a long token after it. */
  { "token 4f2c9a7e1b3d5f6a8c0e2b4d", "token [redacted token len=24]", 1 },
  { "Your API key 4f2c9a7e1b3d5f6a8c0e2b4d.", "Your API key [redacted api_key len=24].", 1 },
  { "secret sauce recipe", "secret sauce recipe", 0 },

  /* PEM private keys. */
  { "a\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg\n-----END PRIVATE KEY-----\nb",
    "a\n[redacted private_key len=68]\nb", 1 },
  { "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", 0 },
  { "-----BEGIN RSA PRIVATE KEY----- no end", "-----BEGIN RSA PRIVATE KEY----- no end", 0 },

  /* False-positive guards: ordinary text stays as it is. */
  { "", "", 0 },
  { "Hello, world. Sign in to continue.", "Hello, world. Sign in to continue.", 0 },
  { "session/123e4567-e89b-12d3-a456-426614174000/x",
    "session/123e4567-e89b-12d3-a456-426614174000/x", 0 },
  { "commit 4f2c9a7e1b3d5f6a8c0e2b4d6f8a0c1e2b4d6f8a",
    "commit 4f2c9a7e1b3d5f6a8c0e2b4d6f8a0c1e2b4d6f8a", 0 },
  { "?id=123e4567-e89b-12d3-a456-426614174000&page=2",
    "?id=123e4567-e89b-12d3-a456-426614174000&page=2", 0 },
  { "key=home.title&author=Jane", "key=home.title&author=Jane", 0 },
  { "if (a == b && password == c)", "if (a == b && password == c)", 0 },
  { "tokens=1500 max_tokens=4096", "tokens=1500 max_tokens=4096", 0 },
  { "shipping=fast spinner=on footprint=3", "shipping=fast spinner=on footprint=3", 0 },
  { "The secretary=Jane; the passenger=Bob", "The secretary=Jane; the passenger=Bob", 0 },
  { "password_length=12 tokenExpires=3600", "password_length=12 tokenExpires=3600", 0 },
  { "Forgot your password? Reset it here.", "Forgot your password? Reset it here.", 0 },

  /* Markers from an earlier pass go through untouched. */
  { "token=[redacted token len=3]", "token=[redacted token len=3]", 0 },
  { "Cookie: [redacted Cookie len=19]", "Cookie: [redacted Cookie len=19]", 0 },
  { "[redacted api_key len=40] and [redacted jwt len=155]",
    "[redacted api_key len=40] and [redacted jwt len=155]", 0 },
  { "[redacted nope] token=abc", "[redacted nope] token=[redacted token len=3]", 1 },
};

static void
test_case (gconstpointer data)
{
  const RedactCase *c = data;
  g_autofree char *once = NULL;
  g_autofree char *twice = NULL;
  guint count = 99;
  guint again = 99;

  once = chp_redact_text (c->in, &count);
  g_assert_cmpstr (once, ==, c->out);
  g_assert_cmpuint (count, ==, c->count);

  twice = chp_redact_text (once, &again);
  g_assert_cmpstr (twice, ==, once);
  g_assert_cmpuint (again, ==, 0);
}

static void
test_names (void)
{
  static const char * const secret[] = {
    "password", "userPassword", "new-password", "passwd", "PASSWORD_CONFIRMATION", "pwd",
    "pass", "api_key", "apiKey", "X-Api-Key", "APIKEY", "access_token", "refreshToken",
    "XSRF-TOKEN", "csrftoken", "_csrf", "sessionid", "session_id", "JSESSIONID", "sid",
    "session", "auth", "Authorization", "cookie", "Set-Cookie", "client_secret", "otp",
    "otpCode", "totp", "pin", "pin2", "userPin", "cvv", "cvc", "card_number", "cardNumber",
    "ccNumber", "security_code", "private_key", "accessKey", "ssn", "iban", "mfa_code",
    "2fa", "X-Amz-Signature", "sig", "passwort", "accountNumber",
    /* Each kind of entry the quick first look must let through: two-letter words and pair
     * words, digits, a secret substring inside a longer word, a pair across two words. */
    "pw", "PW", "cc_number", "ccNo", "credit card", "creditCard", "2faCode", "pin1234",
    "myapikeyvalue", "xsessidx", "xtokenx", "userPassphrase", "hotp", "csc", "bearer", "jwt",
    "ccnum", "sig2", "card no",
  };
  static const char * const plain[] = {
    "name", "username", "email", "valueLength", "filled", "credential", "type", "label",
    "tokenType", "passwordHint", "sessionExpires", "csrfHeaderName", "password_length",
    "passwordField", "shipping", "spinner", "pinned", "author", "authority", "secure",
    "httpOnly", "sameSite", "expirationDate", "domain", "key", "tokens", "max_tokens",
    "secretary", "passenger", "compass", "bypass", "keyboard", "", "id", "documentId",
    "browser", "activate", "compose", "scopes", "tabs", "p", "c",
  };
  g_autofree char *long_name = g_strnfill (200, 'a');
  g_autofree char *long_secret = g_strconcat (long_name, "password", NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (secret); i++)
    if (!chp_redact_name_is_secret (secret[i], -1))
      g_error ("%s should be a secret name", secret[i]);
  for (gsize i = 0; i < G_N_ELEMENTS (plain); i++)
    if (chp_redact_name_is_secret (plain[i], -1))
      g_error ("%s should not be a secret name", plain[i]);

  /* A length bounds the name; overlong names are not names. */
  g_assert_true (chp_redact_name_is_secret ("password=x", 8));
  g_assert_false (chp_redact_name_is_secret ("password=x", 3));
  g_assert_false (chp_redact_name_is_secret (long_secret, -1));
}

static void
test_is_marker (void)
{
  g_assert_true (chp_redact_is_marker ("[redacted password len=8]"));
  g_assert_true (chp_redact_is_marker ("[redacted X-Api-Key len=0]"));
  g_assert_false (chp_redact_is_marker ("[redacted password len=8] "));
  g_assert_false (chp_redact_is_marker ("[redacted  len=8]"));
  g_assert_false (chp_redact_is_marker ("[redacted pass word len=8]"));
  g_assert_false (chp_redact_is_marker ("[redacted password len=]"));
  g_assert_false (chp_redact_is_marker ("[redacted password len=8"));
  g_assert_false (chp_redact_is_marker (""));
}

static void
test_marker_name_cleaned (void)
{
  g_autofree char *out = NULL;

  /* A page chooses parameter names: nothing in one can close the marker or look like markup. */
  out = chp_redact_text ("a<b>]password=x", NULL);
  g_assert_cmpstr (out, ==, "a<b>]password=[redacted password len=1]");
  g_clear_pointer (&out, g_free);
  out = chp_redact_text ("{\"pass]word <i>\": \"x\"}", NULL);
  g_assert_cmpstr (out, ==, "{\"pass]word <i>\": \"[redacted pass_word_i len=1]\"}");
}

static void
test_invalid_utf8 (void)
{
  g_autofree char *out = NULL;
  guint count = 0;

  out = chp_redact_text ("token=a\xff" "b ok", &count);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  g_assert_cmpstr (out, ==, "token=[redacted token len=3] ok");
  g_assert_cmpuint (count, ==, 1);
}

/* An unclosed quoted secret is masked up to a bound; the bound must not split a character
 * (found by comparing with the extension's redact.js, which never did). */
static void
test_bound_in_character (void)
{
  g_autoptr(GString) in = g_string_new ("\"password\": \"");
  g_autofree char *out = NULL;

  for (guint i = 0; i < 4095; i++)
    g_string_append_c (in, 'a');
  for (guint i = 0; i < 10; i++)
    g_string_append (in, "\xc3\xa9");
  out = chp_redact_text (in->str, NULL);
  g_assert_true (g_utf8_validate (out, -1, NULL));
  g_assert_null (strstr (out, "aaaaaaaa"));
  g_assert_true (g_str_has_prefix (out, "\"password\": \"[redacted password len=4096]"));
}

/* ---- JSON ---- */

static JsonNode *
parse (const char *text)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;

  json_parser_load_from_data (parser, text, -1, &error);
  g_assert_no_error (error);
  return json_node_copy (json_parser_get_root (parser));
}

static char *
to_text (JsonNode *node)
{
  return json_to_string (node, FALSE);
}

static void
assert_json (const char *in,
             const char *expected,
             guint       expected_count)
{
  g_autoptr(JsonNode) node = parse (in);
  g_autoptr(JsonNode) want = parse (expected);
  g_autoptr(JsonNode) once = NULL;
  g_autoptr(JsonNode) twice = NULL;
  g_autofree char *once_text = NULL;
  g_autofree char *want_text = NULL;
  g_autofree char *in_text = to_text (node);
  g_autofree char *after_text = NULL;
  guint count = 99;
  guint again = 99;

  once = chp_redact_json (node, &count);
  once_text = to_text (once);
  want_text = to_text (want);
  g_assert_cmpstr (once_text, ==, want_text);
  g_assert_cmpuint (count, ==, expected_count);

  /* A copy: the input is untouched. */
  after_text = to_text (node);
  g_assert_cmpstr (after_text, ==, in_text);

  twice = chp_redact_json (once, &again);
  g_assert_true (json_node_equal (twice, once));
  g_assert_cmpuint (again, ==, 0);
}

static void
test_json_members (void)
{
  assert_json ("{\"password\":\"hunter2\",\"user\":\"bob\"}",
               "{\"password\":\"[redacted password len=7]\",\"user\":\"bob\"}", 1);
  assert_json ("{\"apiKey\":\"k\",\"csrf_token\":\"c\",\"sessionId\":\"s\",\"otp\":123456,"
               "\"cvv\":12.5}",
               "{\"apiKey\":\"[redacted apiKey len=1]\","
               "\"csrf_token\":\"[redacted csrf_token len=1]\","
               "\"sessionId\":\"[redacted sessionId len=1]\",\"otp\":\"[redacted otp len=6]\","
               "\"cvv\":\"[redacted cvv len=4]\"}", 5);
  /* Empty strings, booleans and null say nothing secret. */
  assert_json ("{\"password\":\"\",\"token\":true,\"secret\":null}",
               "{\"password\":\"\",\"token\":true,\"secret\":null}", 0);
  /* Metadata about a secret stays. */
  assert_json ("{\"tokenType\":\"Bearer\",\"passwordHint\":\"pet\",\"tokenExpires\":3600}",
               "{\"tokenType\":\"Bearer\",\"passwordHint\":\"pet\",\"tokenExpires\":3600}", 0);
  /* Strings under other names still go through the text rules. */
  assert_json ("{\"text\":\"Cookie: a=b\",\"url\":\"https://x.test/?token=abc\"}",
               "{\"text\":\"Cookie: [redacted Cookie len=3]\","
               "\"url\":\"https://x.test/?token=[redacted token len=3]\"}", 2);
}

static void
test_json_snapshot_fields (void)
{
  /* What the extension's snapshot sends for a form: no values, only flags and lengths. */
  const char *snapshot =
    "{\"forms\":[{\"ref\":\"e1\",\"name\":\"login\",\"action\":\"https://x.test/session\","
    "\"method\":\"post\",\"fields\":[{\"ref\":\"e2\",\"name\":\"password\",\"type\":\"password\","
    "\"label\":\"Password\",\"required\":true,\"credential\":true,\"filled\":true,"
    "\"valueLength\":8},{\"ref\":\"e3\",\"name\":\"user_pin\",\"type\":\"text\",\"label\":\"PIN\","
    "\"required\":false,\"credential\":true,\"filled\":false,\"valueLength\":0}]}]}";

  assert_json (snapshot, snapshot, 0);
}

static void
test_json_cookie_list (void)
{
  /* browser.cookies: names, domains and flags stay; only values would be secret. */
  const char *cookies =
    "{\"cookies\":[{\"name\":\"SID\",\"domain\":\".x.test\",\"path\":\"/\",\"secure\":true,"
    "\"httpOnly\":true,\"sameSite\":\"lax\",\"session\":true,\"valueLength\":40}]}";

  assert_json (cookies, cookies, 0);
  /* A list of scalars under a secret name: each is a secret. */
  assert_json ("{\"cookies\":[\"a=b\",\"c=d\"],\"tokens\":[1,2]}",
               "{\"cookies\":[\"[redacted cookies len=3]\",\"[redacted cookies len=3]\"],"
               "\"tokens\":[1,2]}", 2);
}

static void
test_json_name_value_pairs (void)
{
  /* Headers as {name, value}: the value is as secret as the name says. */
  assert_json ("{\"headers\":[{\"name\":\"Authorization\",\"value\":\"Bearer abc12345\"},"
               "{\"name\":\"Accept\",\"value\":\"text/html\"},"
               "{\"name\":\"Set-Cookie\",\"value\":\"id=1\"}]}",
               "{\"headers\":[{\"name\":\"Authorization\","
               "\"value\":\"[redacted Authorization len=15]\"},"
               "{\"name\":\"Accept\",\"value\":\"text/html\"},"
               "{\"name\":\"Set-Cookie\",\"value\":\"[redacted Set-Cookie len=4]\"}]}", 2);
}

static void
test_json_deep (void)
{
  g_autoptr(GString) in = g_string_new (NULL);
  g_autoptr(GString) want = g_string_new (NULL);

  /* Secrets are found however deep they sit; objects under a secret name are walked, not
   * swallowed whole. */
  assert_json ("{\"a\":[{\"b\":{\"c\":[[{\"secret\":\"xyz\",\"ok\":\"fine\"}]]}}],"
               "\"auth\":{\"user\":\"bob\",\"password\":\"p\"}}",
               "{\"a\":[{\"b\":{\"c\":[[{\"secret\":\"[redacted secret len=3]\","
               "\"ok\":\"fine\"}]]}}],"
               "\"auth\":{\"user\":\"bob\",\"password\":\"[redacted password len=1]\"}}", 2);

  /* Top-level scalars and arrays. */
  assert_json ("[\"ghp_abcdefghijklmnopqrstuvwxyz0123456789\",1,true,null]",
               "[\"[redacted github_token len=40]\",1,true,null]", 1);
  assert_json ("\"plain text\"", "\"plain text\"", 0);

  /* 100 levels are kept as they are. */
  for (guint i = 0; i < 100; i++)
    g_string_append (in, "{\"x\":");
  g_string_append (in, "{\"token\":\"abc\"}");
  g_string_append (want, in->str);
  g_string_truncate (want, want->len - strlen ("{\"token\":\"abc\"}"));
  g_string_append (want, "{\"token\":\"[redacted token len=3]\"}");
  for (guint i = 0; i < 100; i++)
    {
      g_string_append_c (in, '}');
      g_string_append_c (want, '}');
    }
  assert_json (in->str, want->str, 1);
}

static void
test_json_too_deep (void)
{
  g_autoptr(JsonNode) root = json_node_new (JSON_NODE_ARRAY);
  g_autoptr(JsonNode) out = NULL;
  JsonNode *node = root;
  guint count = 0;
  guint depth = 0;

  /* Built by hand: json-glib's parser stops at a lower depth. */
  json_node_take_array (root, json_array_new ());
  for (guint i = 0; i < 400; i++)
    {
      JsonNode *child = json_node_new (JSON_NODE_ARRAY);

      json_node_take_array (child, json_array_new ());
      json_array_add_element (json_node_get_array (node), child);
      node = child;
    }
  json_array_add_string_element (json_node_get_array (node), "token=abc");

  out = chp_redact_json (root, &count);
  g_assert_cmpuint (count, ==, 1);
  for (node = out; JSON_NODE_HOLDS_ARRAY (node); depth++)
    node = json_array_get_element (json_node_get_array (node), 0);
  g_assert_true (JSON_NODE_HOLDS_NULL (node));
  g_assert_cmpuint (depth, <, 400);
}

static void
test_linear_time (void)
{
  static const char * const units[] = {
    "\"password\":\"", "password=\"", "eyJaaaaaaaaaa.", "Bearer ", "\"", "[redacted ",
    "-----BEGIN PRIVATE KEY-----", "password: ", "a=",
  };

  /* Each unit repeated to 2 MiB: a quadratic scan would take minutes. */
  for (gsize u = 0; u < G_N_ELEMENTS (units); u++)
    {
      g_autoptr(GString) text = g_string_new (NULL);
      g_autoptr(GTimer) timer = g_timer_new ();
      g_autofree char *out = NULL;

      while (text->len < 2 * 1024 * 1024)
        g_string_append (text, units[u]);
      out = chp_redact_text (text->str, NULL);
      g_assert_nonnull (out);
      g_test_message ("%s: %.3f s", units[u], g_timer_elapsed (timer, NULL));
      g_assert_cmpfloat (g_timer_elapsed (timer, NULL), <, 10.0);
    }
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (CASES); i++)
    {
      g_autofree char *path = g_strdup_printf ("/chaperone/redact/text/%03" G_GSIZE_FORMAT, i);

      g_test_add_data_func (path, &CASES[i], test_case);
    }
  g_test_add_func ("/chaperone/redact/names", test_names);
  g_test_add_func ("/chaperone/redact/is-marker", test_is_marker);
  g_test_add_func ("/chaperone/redact/marker-name-cleaned", test_marker_name_cleaned);
  g_test_add_func ("/chaperone/redact/invalid-utf8", test_invalid_utf8);
  g_test_add_func ("/chaperone/redact/bound-in-character", test_bound_in_character);
  g_test_add_func ("/chaperone/redact/json/members", test_json_members);
  g_test_add_func ("/chaperone/redact/json/snapshot-fields", test_json_snapshot_fields);
  g_test_add_func ("/chaperone/redact/json/cookie-list", test_json_cookie_list);
  g_test_add_func ("/chaperone/redact/json/name-value-pairs", test_json_name_value_pairs);
  g_test_add_func ("/chaperone/redact/json/deep", test_json_deep);
  g_test_add_func ("/chaperone/redact/json/too-deep", test_json_too_deep);
  g_test_add_func ("/chaperone/redact/linear-time", test_linear_time);

  return g_test_run ();
}
