/* test-url-floor.c: the URL floor. Each row is a URL a page or a hostile agent could present,
 * with the level and reason a person would expect; a row that passes the wrong way is a bank
 * page an agent can read, or an ordinary site it cannot. */
#include "config.h"

#include <string.h>

#include "chp-url-floor.h"

#define BRIDGE_PORT 64333

typedef struct
{
  const char *url;
  ChpFloorLevel level;
  const char *reason;
} FloorCase;

#define OK(u)            { u, CHP_FLOOR_OK, "ok" }
#define HANDS(u, r)      { u, CHP_FLOOR_HANDS_ONLY, r }
#define BLIND(u, r)      { u, CHP_FLOOR_BLIND, r }

/* The person's entries used by every row. */
static const char * const PERSON_BLIND[] = {
  "health.example", "*.corp.example", "https://Payroll.Example.NET/login", "10.0.0.7",
  "nope/path", "*", "", NULL,
};
static const char * const PERSON_HANDS[] = { "shop.example", "*.docs.example", NULL };

static const FloorCase CASES[] = {
  /* Ordinary pages. */
  OK ("https://example.com/"),
  OK ("http://example.com/a?b=c#d"),
  OK ("https://www.wikipedia.org/wiki/Bank_(disambiguation)"),  /* "bank" in a path is fine */
  OK ("https://example.com/?next=https://bank.com/"),
  OK ("https://news.example.org:8443/x"),
  OK ("https://192.168.1.20/router"),
  OK ("http://localhost:8080/dev"),            /* loopback, but not the bridge port */
  OK ("https://127.0.0.1:64334/"),
  OK ("https://chrome.google.com/intl/en/chrome/"),  /* store only under /webstore */
  OK ("https://google.com/search?q=chase.com"),
  OK ("https://notchase.com/"),                /* suffix only at a dot */
  OK ("https://github.com/settingsfoo"),       /* a path prefix ends at a segment */
  OK ("https://github.com/chaperone/chaperone"),
  OK ("https://bitwarden.com/pricing"),        /* the vendor's site; the vault is blind */
  OK ("https://ba.nk.example/"),               /* "bank" across labels is not a label */

  /* Browser and non-web pages. */
  BLIND ("chrome://settings/passwords", "browser_page"),
  BLIND ("chrome-extension://abcdefghijklmnopabcdefghijklmnop/popup.html", "browser_page"),
  BLIND ("edge://settings", "browser_page"),
  BLIND ("brave://wallet", "browser_page"),
  BLIND ("about:blank", "browser_page"),
  BLIND ("ABOUT:config", "browser_page"),
  BLIND ("view-source:https://example.com/", "browser_page"),
  BLIND ("devtools://devtools/bundled/inspector.html", "browser_page"),
  BLIND ("moz-extension://0b1c2d3e-aaaa-bbbb-cccc-111122223333/p.html", "browser_page"),
  BLIND ("chrome-untrusted://print/", "browser_page"),
  BLIND ("file:///home/person/.ssh/id_ed25519", "not_web"),
  BLIND ("data:text/html,<h1>hi</h1>", "not_web"),
  BLIND ("javascript:alert(document.cookie)", "not_web"),
  BLIND ("ftp://example.com/x", "not_web"),
  BLIND ("ws://example.com/socket", "not_web"),
  BLIND ("blob:chrome-extension://abcdefghijklmnopabcdefghijklmnop/1234", "browser_page"),
  BLIND ("blob:https://mybank.example/5b1c0a4e", "bank"),
  OK ("blob:https://example.com/5b1c0a4e-1111-2222-3333-444455556666"),
  BLIND ("blob:blob:https://example.com/x", "malformed"),
  BLIND ("blob:null/5b1c0a4e", "malformed"),
  BLIND ("filesystem:https://bank.example/temporary/x", "bank"),

  /* Extension stores. */
  BLIND ("https://chromewebstore.google.com/detail/x/abc", "extension_store"),
  BLIND ("https://chrome.google.com/webstore/detail/abc", "extension_store"),
  BLIND ("https://chrome.google.com/WebStore", "extension_store"),
  BLIND ("https://chrome.google.com//webstore/category", "extension_store"),
  BLIND ("https://chrome.google.com/intl/../webstore/x", "extension_store"),
  BLIND ("https://chrome.google.com/%77ebstore/x", "extension_store"),
  BLIND ("https://microsoftedge.microsoft.com/addons/detail/x", "extension_store"),
  BLIND ("https://addons.mozilla.org/en-US/firefox/", "extension_store"),

  /* Password managers. */
  BLIND ("https://vault.bitwarden.com/#/vault", "password_manager"),
  BLIND ("https://my.1password.com/vaults", "password_manager"),
  BLIND ("https://lastpass.com/vault/", "password_manager"),
  BLIND ("https://app.dashlane.com/", "password_manager"),
  BLIND ("https://passwords.google.com/", "password_manager"),
  BLIND ("https://passwords.google/", "password_manager"),
  BLIND ("https://keepersecurity.com/vault/", "password_manager"),

  /* Sign-in hosts. */
  BLIND ("https://accounts.google.com/signin/v2", "sign_in"),
  BLIND ("https://login.microsoftonline.com/common/oauth2", "sign_in"),
  BLIND ("https://github.com/login?return_to=x", "sign_in"),

  /* Banks. */
  BLIND ("https://www.bankofamerica.com/", "bank"),
  BLIND ("https://online.lloydsbank.co.uk/", "bank"),
  BLIND ("https://mybank.example/", "bank"),
  BLIND ("https://BANK.example/", "bank"),
  BLIND ("https://www.labanquepostale.fr/", "bank"),
  BLIND ("https://secure.chase.com/web/auth", "bank"),
  BLIND ("https://chase.com/", "bank"),
  BLIND ("https://www.paypal.com/myaccount", "bank"),
  BLIND ("https://xn--bnk-6cd.com/", "bank"),                   /* b + Cyrillic а + nk */
  BLIND ("https://b\xd0\xb0nk.com/", "bank"),                   /* the same, as Unicode */
  /* Full-width ｂａｎｋ. */
  BLIND ("https://\xef\xbd\x82\xef\xbd\x81\xef\xbd\x8e\xef\xbd\x8b.example/", "bank"),
  BLIND ("https://b\xc3\xa0nk.example/", "bank"),               /* bànk: accents dropped */
  BLIND ("https://xn--bnk-qla.de/", "bank"),                    /* bänk, punycode */
  BLIND ("https://\xd0\xac\xd0\x90NK.example/", "bank"),        /* ЬАNK, Cyrillic */
  BLIND ("https://my-bank\xe3\x80\x82" "example/", "bank"),     /* ideographic full stop */
  BLIND ("https://bank.com./", "bank"),                         /* trailing dot */
  BLIND ("https://b%61nk.com/", "bank"),                        /* percent-encoded host */
  BLIND ("https://evil.test@bank.com/", "bank"),                /* userinfo is not the host */
  BLIND ("https://user:pw@secure.bank.com:8443/x", "bank"),
  OK ("https://bank.com@evil.test/"),
  OK ("https://bank.com:443@evil.test/"),

  /* Chaperone's bridge. */
  BLIND ("http://127.0.0.1:64333/pairing", "chaperone"),
  BLIND ("http://localhost:64333/", "chaperone"),
  BLIND ("http://LOCALHOST.:64333/", "chaperone"),
  BLIND ("http://app.localhost:64333/", "chaperone"),
  BLIND ("http://[::1]:64333/extension", "chaperone"),
  BLIND ("http://[::ffff:127.0.0.1]:64333/", "chaperone"),
  BLIND ("http://127.1:64333/", "chaperone"),                   /* WHATWG short IPv4 */
  BLIND ("http://2130706433:64333/", "chaperone"),              /* 127.0.0.1 as one number */
  BLIND ("http://0x7f.0.0.1:64333/", "chaperone"),
  BLIND ("http://0177.0.0.1:64333/", "chaperone"),
  BLIND ("http://127.0.0.2:64333/", "chaperone"),
  BLIND ("http://0.0.0.0:64333/", "chaperone"),
  BLIND ("http://%31%32%37.0.0.1:64333/", "malformed"),         /* GUri refuses an encoded IP */

  /* Parser tricks: refused rather than guessed. */
  BLIND ("https://example.com\\@bank.com/", "malformed"),
  BLIND ("https://bank.com\\.example.com/", "malformed"),
  BLIND ("https://a@b@example.com/", "malformed"),
  BLIND ("https://exa mple.com/", "malformed"),
  BLIND ("https://ba\tnk.com/", "malformed"),
  BLIND ("https://ba\nnk.com/", "malformed"),
  BLIND (" https://example.com/", "malformed"),
  BLIND ("https:///path", "malformed"),
  BLIND ("https://", "malformed"),
  BLIND ("https://example.com:99999/", "malformed"),
  BLIND ("https://example..com/", "malformed"),
  BLIND ("https://%2561.example/", "malformed"),                /* encoded twice */
  BLIND ("https://[fe80::1%25eth0]/", "malformed"),
  BLIND ("https://256.0.0.1/", "malformed"),
  BLIND ("https://1.2.3.4.5/", "malformed"),
  BLIND ("example.com", "malformed"),
  BLIND ("//example.com/", "malformed"),
  BLIND ("", "malformed"),
  BLIND ("https://ex\xff" "ample.com/", "malformed"),
  BLIND ("https://example.com/%", "malformed"),

  /* Hands-only. */
  HANDS ("https://myaccount.google.com/security", "account_settings"),
  HANDS ("https://account.microsoft.com/", "account_settings"),
  HANDS ("https://appleid.apple.com/account/manage", "account_settings"),
  HANDS ("https://github.com/settings/tokens", "account_settings"),
  HANDS ("https://GitHub.com/Settings", "account_settings"),

  /* The person's entries. */
  BLIND ("https://health.example/records", "person_blind"),
  BLIND ("https://portal.health.example/", "person_blind"),
  BLIND ("https://wiki.corp.example/", "person_blind"),
  OK ("https://corp.example/"),                                 /* "*." is subdomains only */
  OK ("https://nothealth.example/"),
  BLIND ("https://payroll.example.net/anything", "person_blind"), /* a URL entry: its host */
  BLIND ("http://10.0.0.7:8080/", "person_blind"),
  OK ("http://10.0.0.70/"),
  HANDS ("https://shop.example/cart", "person_hands_only"),
  HANDS ("https://a.docs.example/", "person_hands_only"),
  OK ("https://docs.example/"),
  BLIND ("https://mybank.shop.example/", "bank"),               /* blind beats hands-only */
};

static ChpUrlFloor *
make_floor (void)
{
  ChpUrlFloor *floor = chp_url_floor_new ();

  chp_url_floor_set_person_rules (floor, PERSON_BLIND, PERSON_HANDS);
  chp_url_floor_set_bridge_port (floor, BRIDGE_PORT);
  return floor;
}

static void
test_case (gconstpointer data)
{
  const FloorCase *c = data;
  g_autoptr(ChpUrlFloor) floor = make_floor ();
  const char *reason = NULL;
  ChpFloorLevel level;

  level = chp_url_floor_check (floor, c->url, &reason);
  if (level != c->level || g_strcmp0 (reason, c->reason) != 0)
    g_test_message ("%s: %s/%s", c->url, chp_floor_level_to_string (level), reason);
  g_assert_cmpstr (chp_floor_level_to_string (level), ==, chp_floor_level_to_string (c->level));
  g_assert_cmpstr (reason, ==, c->reason);
}

static void
test_hex_host_not_number (void)
{
  g_autoptr(ChpUrlFloor) floor = make_floor ();
  const char *reason = NULL;

  /* "0x1g" does not end in a number, so it is a name, not an address. */
  g_assert_cmpint (chp_url_floor_check (floor, "https://0x1g/", &reason), ==, CHP_FLOOR_OK);
  /* "0xg" looks like a number prefix but is not hex: a name too. */
  g_assert_cmpint (chp_url_floor_check (floor, "https://a.0xg/", &reason), ==, CHP_FLOOR_OK);
}

static void
test_person_rules_count_and_replace (void)
{
  g_autoptr(ChpUrlFloor) floor = chp_url_floor_new ();
  const char * const blind[] = { "health.example", NULL };
  const char *reason = NULL;

  /* "nope/path", "*" and "" are not host patterns. */
  g_assert_cmpuint (chp_url_floor_set_person_rules (floor, PERSON_BLIND, PERSON_HANDS), ==, 3);

  /* Setting again replaces, it does not add up. */
  g_assert_cmpuint (chp_url_floor_set_person_rules (floor, blind, NULL), ==, 0);
  g_assert_cmpint (chp_url_floor_check (floor, "https://wiki.corp.example/", &reason), ==,
                   CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check (floor, "https://shop.example/", &reason), ==,
                   CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check (floor, "https://health.example/", &reason), ==,
                   CHP_FLOOR_BLIND);

  /* The person cannot lower a built-in rule: an empty list changes nothing for a bank. */
  chp_url_floor_set_person_rules (floor, NULL, NULL);
  g_assert_cmpint (chp_url_floor_check (floor, "https://health.example/", &reason), ==,
                   CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check (floor, "https://chase.com/", &reason), ==,
                   CHP_FLOOR_BLIND);
}

static void
test_normalize_pattern (void)
{
  static const struct { const char *in; const char *out; } rows[] = {
    { "Example.COM", "example.com" },
    { "  example.com.  ", "example.com" },
    { "*.Corp.Example", "*.corp.example" },
    { "https://user@Shop.Example:8443/a?b", "shop.example" },
    { "b\xc3\xa4nk.de", "xn--bnk-qla.de" },
    { "192.168.0.1", "192.168.0.1" },
    { "*.192.168.0.1", NULL },
    { "*", NULL },
    { "", NULL },
    { "example.com/path", NULL },
    { "exa mple.com", NULL },
    { "a..b", NULL },
  };

  for (gsize i = 0; i < G_N_ELEMENTS (rows); i++)
    {
      g_autofree char *got = chp_url_floor_normalize_pattern (rows[i].in);

      g_assert_cmpstr (got, ==, rows[i].out);
    }
}

static void
test_bridge_port (void)
{
  g_autoptr(ChpUrlFloor) floor = chp_url_floor_new ();
  const char *reason = NULL;

  /* With no port set nothing on loopback is the bridge. */
  g_assert_cmpint (chp_url_floor_check (floor, "http://127.0.0.1:64333/", &reason), ==,
                   CHP_FLOOR_OK);
  chp_url_floor_set_bridge_port (floor, 80);
  g_assert_cmpuint (chp_url_floor_get_bridge_port (floor), ==, 80);
  /* The default port of the scheme counts. */
  g_assert_cmpint (chp_url_floor_check (floor, "http://localhost/", &reason), ==,
                   CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "chaperone");
  g_assert_cmpint (chp_url_floor_check (floor, "https://localhost/", &reason), ==,
                   CHP_FLOOR_OK);
}

static void
test_check_page_password (void)
{
  g_autoptr(ChpUrlFloor) floor = make_floor ();
  const char *reason = NULL;

  g_assert_cmpint (chp_url_floor_check_page (floor, "https://example.com/login", FALSE, &reason),
                   ==, CHP_FLOOR_OK);
  g_assert_cmpint (chp_url_floor_check_page (floor, "https://example.com/login", TRUE, &reason),
                   ==, CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "sign_in");
  /* A hands-only page with a password field is blind. */
  g_assert_cmpint (chp_url_floor_check_page (floor, "https://shop.example/", TRUE, &reason), ==,
                   CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "sign_in");
  /* A blind page keeps its own, more telling reason. */
  g_assert_cmpint (chp_url_floor_check_page (floor, "https://chase.com/", TRUE, &reason), ==,
                   CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "bank");
  /* And NULL for the reason is allowed. */
  g_assert_cmpint (chp_url_floor_check_page (floor, "about:blank", FALSE, NULL), ==,
                   CHP_FLOOR_BLIND);
}

static void
test_long_url (void)
{
  g_autoptr(ChpUrlFloor) floor = make_floor ();
  g_autoptr(GString) url = g_string_new ("https://example.com/?q=");
  const char *reason = NULL;

  while (url->len < CHP_URL_FLOOR_MAX_URL)
    g_string_append_c (url, 'a');
  g_assert_cmpint (chp_url_floor_check (floor, url->str, &reason), ==, CHP_FLOOR_OK);
  g_string_append_c (url, 'a');
  g_assert_cmpint (chp_url_floor_check (floor, url->str, &reason), ==, CHP_FLOOR_BLIND);
  g_assert_cmpstr (reason, ==, "malformed");
}

static void
test_finalized (void)
{
  ChpUrlFloor *floor = make_floor ();

  g_assert_finalize_object (floor);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);

  for (gsize i = 0; i < G_N_ELEMENTS (CASES); i++)
    {
      g_autofree char *path = g_strdup_printf ("/chaperone/floor/case/%03" G_GSIZE_FORMAT "-%s", i,
                              CASES[i].reason);
      g_test_add_data_func (path, &CASES[i], test_case);
    }
  g_test_add_func ("/chaperone/floor/hex-host-not-number", test_hex_host_not_number);
  g_test_add_func ("/chaperone/floor/person-rules", test_person_rules_count_and_replace);
  g_test_add_func ("/chaperone/floor/normalize-pattern", test_normalize_pattern);
  g_test_add_func ("/chaperone/floor/bridge-port", test_bridge_port);
  g_test_add_func ("/chaperone/floor/check-page-password", test_check_page_password);
  g_test_add_func ("/chaperone/floor/long-url", test_long_url);
  g_test_add_func ("/chaperone/floor/finalized", test_finalized);

  return g_test_run ();
}
