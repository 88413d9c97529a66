/* SPDX-License-Identifier: GPL-3.0-or-later */
/* chp-redact-numbers.c: numbers the text scan masks without a name next to them, because they
 * check out as what they are — a payment card (network prefix, length, Luhn), a US social security
 * number, a French NIR or a Chinese resident id with its check digit. Numbers in prose (an order,
 * a date, a phone number, a price) fail these checks and stay. */
#include "config.h"

#define G_LOG_DOMAIN "chaperone-redact"

#include "chp-redact-private.h"

#define MAX_ID_CHARS 19  /* the longest card number; ids are shorter */
#define MAX_GROUPS   8

/* A number as written at a word start: its characters (digits, and the letters an id may have)
 * and where each group of it ends, the groups split by one space or one '-' (the same one). */
typedef struct
{
  char c[MAX_ID_CHARS];
  guint n;
  guint n_groups;
  guint group_chars[MAX_GROUPS];  /* characters before the end of each group */
  gsize group_end[MAX_GROUPS];    /* text offset after each group */
  char sep;
} Number;

/* Reads the number at @i into @num. Groups stop where one more would pass MAX_ID_CHARS; a first
 * group longer than that is no id at all. */
static gboolean
read_number (const Scan *sc,
             gsize       i,
             Number     *num)
{
  const char *s = sc->s;
  gsize e = i;

  num->n = 0;
  num->n_groups = 0;
  num->sep = '\0';
  for (;;)
    {
      gsize group_start = e;

      while (e < sc->n)
        {
          char c = s[e];
          /* A French NIR's department may be 2A or 2B (Corsica); a Chinese id may end in X. */
          gboolean letter = (num->n == 6 && num->c[5] == '2' && (c == 'A' || c == 'B')) ||
                            (num->n == 17 && (c == 'X' || c == 'x'));

          if (!g_ascii_isdigit (c) && !letter)
            break;
          if (num->n == MAX_ID_CHARS)
            {
              if (num->n_groups == 0)
                return FALSE;
              num->n = num->group_chars[num->n_groups - 1];
              return TRUE;
            }
          num->c[num->n++] = c;
          e++;
          if (c == 'X' || c == 'x')
            break;
        }
      if (e == group_start)
        break;
      num->group_chars[num->n_groups] = num->n;
      num->group_end[num->n_groups] = e;
      num->n_groups++;
      if (num->n_groups == MAX_GROUPS || e + 1 >= sc->n || (s[e] != ' ' && s[e] != '-') ||
          (num->sep != '\0' && s[e] != num->sep) || !is_digit_at (sc, e + 1) ||
          g_ascii_toupper (num->c[num->n - 1]) == 'X')
        break;
      num->sep = s[e];
      e++;
    }
  return num->n_groups > 0;
}

static gboolean
luhn_ok (const char *c,
         guint       n)
{
  guint sum = 0;

  for (guint k = 0; k < n; k++)
    {
      guint d = (guint) (c[n - 1 - k] - '0');

      if (k % 2 == 1)
        d = d * 2 > 9 ? d * 2 - 9 : d * 2;
      sum += d;
    }
  return sum % 10 == 0;
}

static guint
number_of (const char *c,
           guint       len)
{
  guint v = 0;

  for (guint k = 0; k < len; k++)
    v = v * 10 + (guint) (c[k] - '0');
  return v;
}

/* A payment card: 13 to 19 digits with a card network's first digits and length, and a valid
 * Luhn check digit (one number in ten passes Luhn alone). */
static gboolean
card_ok (const char *c,
         guint       n)
{
  guint two, four;
  gboolean brand;

  if (n < 13 || n > 19)
    return FALSE;
  for (guint k = 0; k < n; k++)
    if (!g_ascii_isdigit (c[k]))
      return FALSE;
  two = number_of (c, 2);
  four = number_of (c, 4);
  switch (c[0])
    {
    case '4':  /* Visa */
      brand = n == 13 || n == 16 || n == 19;
      break;
    case '5':  /* Mastercard */
      brand = two >= 51 && two <= 55 && n == 16;
      break;
    case '2':  /* Mastercard's 2-series */
      brand = four >= 2221 && four <= 2720 && n == 16;
      break;
    case '3':  /* American Express; JCB; Diners */
      brand = ((two == 34 || two == 37) && n == 15) || (two == 35 && n >= 16) ||
              ((two == 36 || two == 38 || two == 39 || (two == 30 && c[2] <= '5')) && n >= 14);
      break;
    case '6':  /* Discover, UnionPay, Maestro */
      brand = n >= 16;
      break;
    default:
      brand = FALSE;
    }
  return brand && luhn_ok (c, n);
}

/* A US social security number, 123-45-6789: area not 000, 666 or 9xx, group not 00, serial
 * not 0000. */
static gboolean
ssn_ok (const Number *num,
        guint         groups)
{
  const char *c = num->c;

  if (groups != 3 || num->sep != '-' || num->group_chars[0] != 3 || num->group_chars[1] != 5 ||
      num->group_chars[2] != 9)
    return FALSE;
  for (guint k = 0; k < 9; k++)
    if (!g_ascii_isdigit (c[k]))
      return FALSE;
  return number_of (c, 3) != 0 && number_of (c, 3) != 666 && c[0] != '9' &&
         number_of (c + 3, 2) != 0 && number_of (c + 5, 4) != 0;
}

/* A French social security number (NIR): sex, year, month, department (2A/2B for Corsica),
 * commune, order, then a key that is 97 minus the first thirteen digits modulo 97. */
static gboolean
nir_ok (const char *c,
        guint       n)
{
  guint64 v = 0;
  guint month;

  if (n != 15 || strchr ("123478", c[0]) == NULL)
    return FALSE;
  for (guint k = 0; k < 15; k++)
    if (!g_ascii_isdigit (c[k]) && k != 6)
      return FALSE;
  month = number_of (c + 3, 2);
  if (!((month >= 1 && month <= 12) || (month >= 20 && month <= 42) || month >= 50))
    return FALSE;
  for (guint k = 0; k < 13; k++)
    {
      guint d;

      if (k == 5 && c[6] == 'A')
        d = 1;                 /* 2A counts as 19 */
      else if (k == 6 && c[6] == 'A')
        d = 9;
      else if (k == 5 && c[6] == 'B')
        d = 1;                 /* 2B as 18 */
      else if (k == 6 && c[6] == 'B')
        d = 8;
      else if (!g_ascii_isdigit (c[k]))
        return FALSE;
      else
        d = (guint) (c[k] - '0');
      v = v * 10 + d;
    }
  return 97 - v % 97 == number_of (c + 13, 2);
}

/* A Chinese resident identity number: region, birth date, sequence, then a check character
 * (ISO 7064 MOD 11-2; 'X' stands for 10). */
static gboolean
cn_id_ok (const char *c,
          guint       n)
{
  static const guint weights[17] = { 7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2 };
  guint sum = 0, year, month, day;

  if (n != 18 || c[0] < '1' || c[0] > '8')
    return FALSE;
  for (guint k = 0; k < 17; k++)
    {
      if (!g_ascii_isdigit (c[k]))
        return FALSE;
      sum += weights[k] * (guint) (c[k] - '0');
    }
  year = number_of (c + 6, 4);
  month = number_of (c + 10, 2);
  day = number_of (c + 12, 2);
  if (year < 1900 || year > 2099 || month < 1 || month > 12 || day < 1 || day > 31)
    return FALSE;
  return g_ascii_toupper (c[17]) == "10X98765432"[sum % 11];
}

/* A card number or a national id at @i, a word start with a digit: its length, and its kind in
 * @name; or 0. The whole number is tried first, then shorter ones at its group ends (a card
 * number followed by its expiry date), each ending a word. */
gsize
chp_redact_match_number (const Scan  *sc,
                         gsize        i,
                         const char **name)
{
  const char *s = sc->s;
  Number num;
  gsize d = i;

  /* Most numbers are short and alone ("12", "2024,"): out before anything is read. What can
   * match is 13 or more digits, or digits then a separator and a digit, or a NIR's 2A/2B. */
  while (is_digit_at (sc, d))
    d++;
  if (d - i < 13 &&
      !(d + 1 < sc->n && (s[d] == ' ' || s[d] == '-') && g_ascii_isdigit (s[d + 1])) &&
      !(d - i == 6 && s[d - 1] == '2' && (s[d] == 'A' || s[d] == 'B')))
    return 0;

  /* "3.4111…" is a decimal fraction, not a number of its own. A marker's ']' counts as the
   * digit it may have replaced: the second pass must keep what the first kept. */
  if (i >= 2 && (s[i - 1] == '.' || s[i - 1] == ',') &&
      (g_ascii_isdigit (s[i - 2]) || s[i - 2] == ']'))
    return 0;
  if (!read_number (sc, i, &num))
    return 0;
  for (guint g = num.n_groups; g > 0; g--)
    {
      guint n = num.group_chars[g - 1];
      gsize e = num.group_end[g - 1];

      /* The number must end a word: "4111…1111abc" and "…1111-rc1" are names, "…1111.5" a
       * decimal ('[' as a digit: a marker there must not make the second pass differ). */
      if (e < sc->n && (is_token_char (s[e]) ||
                        ((s[e] == '.' || s[e] == ',') && e + 1 < sc->n &&
                         (g_ascii_isdigit (s[e + 1]) || s[e + 1] == '['))))
        continue;
      if (g == num.n_groups && ssn_ok (&num, g))
        *name = "ssn";
      else if (card_ok (num.c, n))
        *name = "card_number";
      else if (nir_ok (num.c, n) || cn_id_ok (num.c, n))
        *name = "national_id";
      else
        continue;
      return e - i;
    }
  return 0;
}
