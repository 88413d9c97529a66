/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-url-floor.c: classifies a URL as blind, hands-only or ok for agents (DESIGN §8), the same
 * way whether it is a tab's URL the extension reported or a URL an agent wants to open.
 *
 * The floor fails closed: anything it cannot parse the way a browser would is blind
 * ("malformed"). Where GUri and the WHATWG URL parser that Chromium uses read a URL differently
 * (a backslash, several '@', a numeric host like 127.1, a percent-encoded host) the URL is either
 * normalised the browser's way or refused, so a page can never be classified by a host the
 * browser would not actually load.
 *
 * Rules, strongest first (the first that matches gives the reason):
 *
 *   level       reason             what
 *   ----------  -----------------  ----------------------------------------------------------
 *   blind       malformed          unparsable, too long, whitespace/control/backslash, bad host
 *   blind       browser_page       chrome:, about:, chrome-extension:, edge:, view-source:, …
 *   blind       not_web            any other scheme that is not http(s) (file:, data:, …);
 *                                  blob:/filesystem: take the level of the URL inside them
 *   blind       chaperone          localhost, *.localhost, 127/8, 0.0.0.0, ::1 on the bridge port
 *   blind       extension_store    BUILTIN_RULES (src/core/policy/floor-rules.json)
 *   blind       password_manager   BUILTIN_RULES
 *   blind       sign_in            identity providers' sign-in hosts (BUILTIN_RULES)
 *   blind       bank               a label containing "bank" or "banque" (BANK_WORDS; also
 *                                  after IDNA decoding, case folding, accents and look-alike
 *                                  letters are removed), or a well-known bank host
 *                                  (BUILTIN_RULES)
 *   blind       person_blind       the person's own blind entries
 *   hands-only  account_settings   account and security settings of big providers
 *   hands-only  person_hands_only  the person's own hands-only entries
 *   ok          ok                 anything else
 *
 * A sign-in page cannot be told from its URL: chp_url_floor_check_page() makes any page that
 * shows a visible password field blind ("sign_in").
 *
 * The person can only add entries; nothing they configure lowers a built-in rule. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-floor"

#include "chp-url-floor.h"

#include <gio/gio.h>
#include <string.h>

struct _ChpUrlFloor
{
  GObject parent_instance;

  GPtrArray *person_blind;       /* normalised patterns: "host" or "*.host" */
  GPtrArray *person_hands_only;
  guint16 bridge_port;
};

G_DEFINE_FINAL_TYPE (ChpUrlFloor, chp_url_floor, G_TYPE_OBJECT)

typedef struct
{
  const char *host;    /* matches the host and its subdomains */
  const char *path;    /* NULL: the whole host; else this path and everything under it */
  ChpFloorLevel level;
  const char *reason;
} BuiltinRule;

/* The built-in tables — BUILTIN_RULES, BROWSER_SCHEMES, BANK_WORDS and CONFUSABLES — come from
 * src/core/policy/floor-rules.json, which the extension's floor-rules.js is made from too: one list of
 * blind and hands-only sites for both floors. Kept short on purpose: each entry is a place where
 * an agent's reading or acting could cost the person their accounts or money. */
#include "chp-url-floor-rules.h"

static void
chp_url_floor_finalize (GObject *object)
{
  ChpUrlFloor *self = CHP_URL_FLOOR (object);

  g_clear_pointer (&self->person_blind, g_ptr_array_unref);
  g_clear_pointer (&self->person_hands_only, g_ptr_array_unref);

  G_OBJECT_CLASS (chp_url_floor_parent_class)->finalize (object);
}

static void
chp_url_floor_class_init (ChpUrlFloorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = chp_url_floor_finalize;
}

static void
chp_url_floor_init (ChpUrlFloor *self)
{
  self->person_blind = g_ptr_array_new_with_free_func (g_free);
  self->person_hands_only = g_ptr_array_new_with_free_func (g_free);
}

/**
 * chp_url_floor_new:
 *
 * Returns: (transfer full): a floor with the built-in rules only and no bridge port. Not
 *   thread-safe: configure and check it from one thread.
 */
ChpUrlFloor *
chp_url_floor_new (void)
{
  return g_object_new (CHP_TYPE_URL_FLOOR, NULL);
}

const char *
chp_floor_level_to_string (ChpFloorLevel level)
{
  switch (level)
    {
    case CHP_FLOOR_OK:
      return "ok";
    case CHP_FLOOR_HANDS_ONLY:
      return "hands_only";
    case CHP_FLOOR_BLIND:
      return "blind";
    default:
      return "blind";
    }
}

/* ---- hosts ------------------------------------------------------------------------------ */

/* WHATWG's IPv4 number parser: "0x7f", "0177" and "127" are all 127. Returns FALSE for anything
 * a browser would refuse. */
static gboolean
parse_ipv4_part (const char *s,
                 guint64    *out)
{
  guint base = 10;
  guint64 v = 0;

  if (*s == '\0')
    return FALSE;
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    {
      base = 16;
      s += 2;
    }
  else if (s[0] == '0' && s[1] != '\0')
    {
      base = 8;
      s += 1;
    }

  for (; *s != '\0'; s++)
    {
      int d = g_ascii_xdigit_value (*s);

      if (d < 0 || (guint) d >= base)
        return FALSE;
      v = v * base + (guint) d;
      if (v > G_MAXUINT32)
        return FALSE;
    }
  *out = v;
  return TRUE;
}

static gboolean
ends_in_a_number (const char *host)
{
  const char *last = strrchr (host, '.');
  const char *p;

  last = last != NULL ? last + 1 : host;
  if (*last == '\0')
    return FALSE;
  if (last[0] == '0' && (last[1] == 'x' || last[1] == 'X'))
    {
      for (p = last + 2; *p != '\0'; p++)
        if (!g_ascii_isxdigit (*p))
          return FALSE;
      return TRUE;
    }
  for (p = last; *p != '\0'; p++)
    if (!g_ascii_isdigit (*p))
      return FALSE;
  return TRUE;
}

/* Returns the dotted quad a browser would connect to, or NULL when it would refuse the host. */
static char *
ipv4_canonical (const char *host)
{
  g_auto(GStrv) parts = g_strsplit (host, ".", -1);
  guint n = g_strv_length (parts);
  guint64 v = 0;

  if (n == 0 || n > 4)
    return NULL;
  for (guint i = 0; i < n; i++)
    {
      guint64 part;

      if (!parse_ipv4_part (parts[i], &part))
        return NULL;
      if (i + 1 < n)
        {
          if (part > 255)
            return NULL;
          v = (v << 8) | part;
        }
      else
        {
          guint shift = 8 * (4 - i);

          if (shift < 32 && part >= (G_GUINT64_CONSTANT (1) << shift))
            return NULL;
          v = (v << shift) | part;
        }
    }
  return g_strdup_printf ("%u.%u.%u.%u", (guint) (v >> 24) & 0xff, (guint) (v >> 16) & 0xff,
                          (guint) (v >> 8) & 0xff, (guint) v & 0xff);
}

static gboolean
labels_are_valid (const char *host)
{
  gsize label = 0;
  gsize total = 0;

  for (const char *p = host; ; p++, total++)
    {
      if (*p == '.' || *p == '\0')
        {
          if (label == 0 || label > 63)
            return FALSE;
          if (*p == '\0')
            break;
          label = 0;
          continue;
        }
      label++;
    }
  return total <= 253;
}

/* The host as a browser would use it: ASCII (punycode), lowercase, no trailing dot, numeric
 * IPv4 forms as a dotted quad, IPv6 without brackets in canonical form. NULL when the host is
 * not one a browser would load. GUri has already percent-decoded it once. */
static char *
normalize_host (const char *raw,
                gboolean   *is_ip)
{
  g_autofree char *trimmed = NULL;
  g_autofree char *ascii = NULL;
  gsize len;

  *is_ip = FALSE;
  if (raw == NULL || *raw == '\0')
    return NULL;

  if (strchr (raw, ':') != NULL)
    {
      /* An IPv6 literal; zone ids ("%eth0") are not web hosts. */
      g_autoptr(GInetAddress) address = NULL;

      if (strchr (raw, '%') != NULL)
        return NULL;
      address = g_inet_address_new_from_string (raw);
      if (address == NULL || g_inet_address_get_family (address) != G_SOCKET_FAMILY_IPV6)
        return NULL;
      *is_ip = TRUE;
      return g_inet_address_to_string (address);
    }

  /* WHATWG's forbidden domain code points; '%' here means it was encoded twice. */
  for (const char *p = raw; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      if (c <= 0x20 || c == 0x7f || strchr ("#%/:<>?@[\\]^|*\"'`{}", c) != NULL)
        return NULL;
    }

  len = strlen (raw);
  trimmed = g_strndup (raw, raw[len - 1] == '.' ? len - 1 : len);
  if (*trimmed == '\0')
    return NULL;

  ascii = g_hostname_to_ascii (trimmed);
  if (ascii == NULL)
    return NULL;
  {
    g_autofree char *lower = g_ascii_strdown (ascii, -1);

    g_free (ascii);
    ascii = g_steal_pointer (&lower);
  }
  /* IDNA maps the ideographic full stop (U+3002) and friends to '.', so look again. */
  len = strlen (ascii);
  if (len > 0 && ascii[len - 1] == '.')
    ascii[len - 1] = '\0';
  if (!labels_are_valid (ascii))
    return NULL;

  if (ends_in_a_number (ascii))
    {
      *is_ip = TRUE;
      return ipv4_canonical (ascii);
    }
  return g_steal_pointer (&ascii);
}

static gboolean
host_matches (const char *host,
              const char *domain,
              gboolean    subdomains_only)
{
  gsize hl = strlen (host);
  gsize dl = strlen (domain);

  if (!subdomains_only && hl == dl)
    return memcmp (host, domain, hl) == 0;
  return hl > dl && host[hl - dl - 1] == '.' && memcmp (host + hl - dl, domain, dl) == 0;
}

static gboolean
path_matches (const char *path,
              const char *prefix)
{
  gsize pl = strlen (prefix);

  return g_ascii_strncasecmp (path, prefix, pl) == 0 && (path[pl] == '\0' || path[pl] == '/');
}

/* The skeleton of a decoded host: compatibility-decomposed, marks dropped, lowercased and
 * look-alike letters mapped to Latin, so "ＢÀＮＫ" and "bаnk" (Cyrillic а) both read "bank". */
static char *
host_skeleton (const char *unicode)
{
  g_autofree char *nfkd = g_utf8_normalize (unicode, -1, G_NORMALIZE_NFKD);
  GString *out;

  if (nfkd == NULL)
    return NULL;
  out = g_string_sized_new (strlen (nfkd));
  for (const char *p = nfkd; *p != '\0'; p = g_utf8_next_char (p))
    {
      gunichar c = g_utf8_get_char (p);

      if (g_unichar_ismark (c))
        continue;
      c = g_unichar_tolower (c);
      for (gsize i = 0; i < G_N_ELEMENTS (CONFUSABLES); i++)
        if (CONFUSABLES[i].from == c)
          {
            c = (gunichar) CONFUSABLES[i].to;
            break;
          }
      g_string_append_unichar (out, c);
    }
  return g_string_free (out, FALSE);
}

static gboolean
contains_bank_word (const char *s)
{
  for (guint i = 0; BANK_WORDS[i] != NULL; i++)
    if (strstr (s, BANK_WORDS[i]) != NULL)
      return TRUE;
  return FALSE;
}

static gboolean
host_is_bankish (const char *ascii)
{
  g_autofree char *unicode = NULL;
  g_autofree char *skeleton = NULL;

  if (contains_bank_word (ascii))
    return TRUE;
  unicode = g_hostname_to_unicode (ascii);
  if (unicode == NULL)
    return FALSE;
  skeleton = host_skeleton (unicode);
  return skeleton != NULL && contains_bank_word (skeleton);
}

/* Every address this machine answers on that a browser could dial for the bridge: the bridge
 * binds 127.0.0.1, and localhost, other 127/8 addresses, 0.0.0.0 and ::1 may all reach it. */
static gboolean
host_is_loopback (const char *host,
                  gboolean    is_ip)
{
  if (!is_ip)
    return g_str_equal (host, "localhost") || g_str_has_suffix (host, ".localhost");
  if (g_str_has_prefix (host, "127.") || g_str_equal (host, "0.0.0.0"))
    return TRUE;
  if (strchr (host, ':') != NULL)
    {
      g_autoptr(GInetAddress) address = g_inet_address_new_from_string (host);
      const guint8 *b;
      static const guint8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

      if (address == NULL)
        return FALSE;
      if (g_inet_address_get_is_loopback (address) || g_inet_address_get_is_any (address))
        return TRUE;
      b = g_inet_address_to_bytes (address);
      return memcmp (b, mapped, 12) == 0 && (b[12] == 127 || (b[12] | b[13] | b[14] | b[15]) == 0);
    }
  return FALSE;
}

/* ---- the person's entries --------------------------------------------------------------- */

/**
 * chp_url_floor_normalize_pattern:
 * @pattern: what the person typed: `example.com` (the host and its subdomains),
 *   `*.corp.example` (subdomains only), an IP address (exactly), or a whole URL (its host)
 *
 * Returns: (transfer full) (nullable): the pattern as the floor stores it, or %NULL when it is
 *   not a host pattern (Preferences can say so).
 */
char *
chp_url_floor_normalize_pattern (const char *pattern)
{
  g_autofree char *text = NULL;
  g_autofree char *host = NULL;
  const char *rest;
  gboolean subdomains_only = FALSE;
  gboolean is_ip;

  g_return_val_if_fail (pattern != NULL, NULL);

  if (!g_utf8_validate (pattern, -1, NULL) || strlen (pattern) > 1024)
    return NULL;
  text = g_strstrip (g_strdup (pattern));

  if (strstr (text, "://") != NULL)
    {
      g_autoptr(GUri) uri = g_uri_parse (text, G_URI_FLAGS_NONE, NULL);

      if (uri == NULL || g_uri_get_host (uri) == NULL)
        return NULL;
      host = normalize_host (g_uri_get_host (uri), &is_ip);
      return g_steal_pointer (&host);
    }

  rest = text;
  if (g_str_has_prefix (rest, "*."))
    {
      subdomains_only = TRUE;
      rest += 2;
    }
  host = normalize_host (rest, &is_ip);
  if (host == NULL || (is_ip && subdomains_only))
    return NULL;
  return subdomains_only ? g_strconcat ("*.", host, NULL) : g_steal_pointer (&host);
}

static guint
fill_patterns (GPtrArray          *into,
               const char * const *patterns)
{
  guint refused = 0;

  g_ptr_array_set_size (into, 0);
  for (guint i = 0; patterns != NULL && patterns[i] != NULL; i++)
    {
      char *normal = chp_url_floor_normalize_pattern (patterns[i]);

      if (normal == NULL)
        refused++;
      else
        g_ptr_array_add (into, normal);
    }
  return refused;
}

/**
 * chp_url_floor_set_person_rules:
 * @blind: (nullable) (array zero-terminated=1): the person's blind entries
 * @hands_only: (nullable) (array zero-terminated=1): the person's hands-only entries
 *
 * Replaces the person's entries. They add to the built-in rules and never lower them; an entry
 * in both lists is blind.
 *
 * Returns: how many entries were not host patterns and were left out.
 */
guint
chp_url_floor_set_person_rules (ChpUrlFloor        *self,
                                const char * const *blind,
                                const char * const *hands_only)
{
  guint refused;

  g_return_val_if_fail (CHP_IS_URL_FLOOR (self), 0);

  refused = fill_patterns (self->person_blind, blind);
  refused += fill_patterns (self->person_hands_only, hands_only);
  if (refused > 0)
    g_debug ("%u floor entries are not host patterns and were left out", refused);
  return refused;
}

/**
 * chp_url_floor_set_bridge_port:
 * @port: the port the bridge listens on; 0 for none
 *
 * Pages on loopback at this port are Chaperone's own and blind.
 */
void
chp_url_floor_set_bridge_port (ChpUrlFloor *self,
                               guint16      port)
{
  g_return_if_fail (CHP_IS_URL_FLOOR (self));

  self->bridge_port = port;
}

guint16
chp_url_floor_get_bridge_port (ChpUrlFloor *self)
{
  g_return_val_if_fail (CHP_IS_URL_FLOOR (self), 0);

  return self->bridge_port;
}

static gboolean
person_matches (GPtrArray  *patterns,
                const char *host)
{
  for (guint i = 0; i < patterns->len; i++)
    {
      const char *pattern = g_ptr_array_index (patterns, i);

      if (g_str_has_prefix (pattern, "*."))
        {
          if (host_matches (host, pattern + 2, TRUE))
            return TRUE;
        }
      else if (host_matches (host, pattern, FALSE))
        return TRUE;
    }
  return FALSE;
}

/* ---- checking --------------------------------------------------------------------------- */

static ChpFloorLevel
blind_because (const char  *why,
               const char **reason_out)
{
  *reason_out = why;
  return CHP_FLOOR_BLIND;
}

/* Lowercased, with runs of '/' collapsed: the server most likely reads "//WebStore" as
 * "/webstore", and being wrong here only ever makes the floor stricter. */
static char *
normalize_path (const char *path)
{
  GString *out = g_string_sized_new (strlen (path) + 1);

  for (const char *p = path; *p != '\0'; p++)
    {
      if (*p == '/' && out->len > 0 && out->str[out->len - 1] == '/')
        continue;
      g_string_append_c (out, g_ascii_tolower (*p));
    }
  if (out->len == 0 || out->str[0] != '/')
    g_string_prepend_c (out, '/');
  return g_string_free (out, FALSE);
}

static ChpFloorLevel
check_url (ChpUrlFloor  *self,
           const char   *url,
           guint         depth,
           const char  **reason_out)
{
  const char *scheme;  /* interned, lowercase */
  g_autoptr(GUri) uri = NULL;
  g_autofree char *host = NULL;
  g_autofree char *path = NULL;
  gboolean is_ip;
  gint port;

  if (*url == '\0' || strlen (url) > CHP_URL_FLOOR_MAX_URL || !g_utf8_validate (url, -1, NULL))
    return blind_because ("malformed", reason_out);

  /* Browsers drop tabs and newlines inside URLs and read '\' as '/': GUri does neither, so such
   * a URL could be classified by a host the browser never loads. Refuse it rather than guess. */
  for (const char *p = url; *p != '\0'; p++)
    {
      guchar c = (guchar) *p;

      if (c <= 0x20 || c == 0x7f || c == '\\')
        return blind_because ("malformed", reason_out);
    }

  scheme = g_uri_peek_scheme (url);
  if (scheme == NULL)
    return blind_because ("malformed", reason_out);

  /* A blob: or filesystem: URL belongs to the origin written inside it. */
  if (g_str_equal (scheme, "blob") || g_str_equal (scheme, "filesystem"))
    {
      if (depth > 0)
        return blind_because ("malformed", reason_out);
      return check_url (self, url + strlen (scheme) + 1, depth + 1, reason_out);
    }

  if (!g_str_equal (scheme, "http") && !g_str_equal (scheme, "https"))
    {
      if (g_strv_contains ((const char * const *) BROWSER_SCHEMES, scheme))
        return blind_because ("browser_page", reason_out);
      return blind_because ("not_web", reason_out);
    }

  uri = g_uri_parse (url, G_URI_FLAGS_NONE, NULL);
  if (uri == NULL)
    return blind_because ("malformed", reason_out);

  /* The host alone decides: userinfo ("https://bank.com@evil.test") is not where a browser goes.
   * Several '@' leave one in GUri's host, which normalize_host refuses. */
  host = normalize_host (g_uri_get_host (uri), &is_ip);
  if (host == NULL)
    return blind_because ("malformed", reason_out);

  port = g_uri_get_port (uri);
  if (port < 0)
    port = g_str_equal (scheme, "https") ? 443 : 80;
  if (self->bridge_port != 0 && port == self->bridge_port && host_is_loopback (host, is_ip))
    return blind_because ("chaperone", reason_out);

  path = normalize_path (g_uri_get_path (uri));

  for (gsize i = 0; i < G_N_ELEMENTS (BUILTIN_RULES); i++)
    {
      const BuiltinRule *rule = &BUILTIN_RULES[i];

      if (rule->level == CHP_FLOOR_BLIND && host_matches (host, rule->host, FALSE) &&
          (rule->path == NULL || path_matches (path, rule->path)))
        return blind_because (rule->reason, reason_out);
    }

  if (!is_ip && host_is_bankish (host))
    return blind_because ("bank", reason_out);

  if (person_matches (self->person_blind, host))
    return blind_because ("person_blind", reason_out);

  for (gsize i = 0; i < G_N_ELEMENTS (BUILTIN_RULES); i++)
    {
      const BuiltinRule *rule = &BUILTIN_RULES[i];

      if (rule->level == CHP_FLOOR_HANDS_ONLY && host_matches (host, rule->host, FALSE) &&
          (rule->path == NULL || path_matches (path, rule->path)))
        {
          *reason_out = rule->reason;
          return CHP_FLOOR_HANDS_ONLY;
        }
    }

  if (person_matches (self->person_hands_only, host))
    {
      *reason_out = "person_hands_only";
      return CHP_FLOOR_HANDS_ONLY;
    }

  *reason_out = "ok";
  return CHP_FLOOR_OK;
}

/**
 * chp_url_floor_check:
 * @url: a URL as the browser reports it or as an agent asks for it
 * @reason_out: (out) (optional) (transfer none): a short static word saying why, for the error
 *   detail and the audit ("bank", "person_blind", "ok", …); never the URL
 *
 * Returns: the level; %CHP_FLOOR_BLIND for anything that cannot be judged.
 */
ChpFloorLevel
chp_url_floor_check (ChpUrlFloor  *self,
                     const char   *url,
                     const char  **reason_out)
{
  const char *reason = "malformed";
  ChpFloorLevel level;

  if (reason_out != NULL)
    *reason_out = reason;
  g_return_val_if_fail (CHP_IS_URL_FLOOR (self), CHP_FLOOR_BLIND);
  g_return_val_if_fail (url != NULL, CHP_FLOOR_BLIND);

  level = check_url (self, url, 0, &reason);
  if (reason_out != NULL)
    *reason_out = reason;
  return level;
}

/**
 * chp_url_floor_check_page:
 * @visible_password: whether the page (any granted frame of it) shows a password field
 *
 * chp_url_floor_check() for a page whose content is known: a page with a visible password
 * field is a sign-in page, and blind ("sign_in") whatever its URL.
 */
ChpFloorLevel
chp_url_floor_check_page (ChpUrlFloor  *self,
                          const char   *url,
                          gboolean      visible_password,
                          const char  **reason_out)
{
  const char *reason = "malformed";
  ChpFloorLevel level;

  if (reason_out != NULL)
    *reason_out = reason;
  g_return_val_if_fail (CHP_IS_URL_FLOOR (self), CHP_FLOOR_BLIND);
  g_return_val_if_fail (url != NULL, CHP_FLOOR_BLIND);

  level = check_url (self, url, 0, &reason);
  if (level != CHP_FLOOR_BLIND && visible_password)
    {
      level = CHP_FLOOR_BLIND;
      reason = "sign_in";
    }
  if (reason_out != NULL)
    *reason_out = reason;
  return level;
}

static void
add_patterns (JsonBuilder *builder,
              const char  *member,
              GPtrArray   *patterns)
{
  json_builder_set_member_name (builder, member);
  json_builder_begin_array (builder);
  for (guint i = 0; i < patterns->len; i++)
    json_builder_add_string_value (builder, g_ptr_array_index (patterns, i));
  json_builder_end_array (builder);
}

/* Returns: (transfer full): the person's entries, normalised, as engine.info gives them to the
 *   extension: `{blind: [...], handsOnly: [...]}` (the built-in table is the extension's own) */
JsonNode *
chp_url_floor_person_rules_to_json (ChpUrlFloor *self)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (CHP_IS_URL_FLOOR (self), NULL);

  json_builder_begin_object (builder);
  add_patterns (builder, "blind", self->person_blind);
  add_patterns (builder, "handsOnly", self->person_hands_only);
  json_builder_end_object (builder);
  return json_builder_get_root (builder);
}
