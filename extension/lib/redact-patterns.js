// SPDX-License-Identifier: GPL-3.0-or-later
// The redaction's word lists and key shapes, made by build-aux/gen-redact-patterns.py from
// src/core/policy/redact-patterns.json, the data chp-redact*.c is built from too. Do not edit: edit
// the data and run `python3 build-aux/gen-redact-patterns.py --js extension/lib/redact-patterns.js
// src/core/policy/redact-patterns.json` (the redact-patterns-js test fails until this file is
// remade).
//
// Plain arrays, not frozen, and read-only by convention: the scan reads them at every word, and V8
// iterates a frozen array on a slower path (measured: the scan 1.4 times slower on 1 MiB).

// Secret names (chp_redact_name_is_secret / isSecretName), for parameters, headers, cookies, fields
// and JSON members. A name is split into lowercase ASCII words at non-alphanumerics and camelCase
// ("X-Api-Key", "userPassword", "csrf_token2"); it is secret when a word, not in notSecretWords,
// contains a substring, or is a whole word (optionally followed by a suffix or by digits), or two
// words in a row are a pair — unless the name has two words or more and its last is a metaWord.

// A word containing one of these makes the name secret. Four letters at least: the C's quick reject
// looks up their first three.
export const SECRET_SUBSTRINGS = [
  'password', 'passwd', 'passphrase', 'passcode', 'passwort', 'secret', 'token', 'apikey', 'csrf',
  'xsrf', 'cookie', 'sessionid', 'sessid', 'privatekey', 'accesskey', 'authorization', 'mnemonic',
];

// A whole word that makes the name secret, alone or followed by one of the suffixes or by digits
// (pin, pincode, otp2).
export const SECRET_WORDS = [
  'pin', 'otp', 'totp', 'hotp', 'cvv', 'cvc', 'csc', 'pwd', 'pw', 'pass', 'mfa', '2fa', 'auth',
  'sid', 'ssn', 'sig', 'signature', 'session', 'bearer', 'jwt', 'iban', 'cardnumber', 'ccnumber',
  'ccnum',
];

// The suffixes a secret word may have.
export const SECRET_WORD_SUFFIXES = [
  'code', 'number', 'num', 'no',
];

// Two words in a row that only together name a secret.
export const SECRET_PAIRS = [
  ['api', 'key'], ['api', 'keys'], ['access', 'key'], ['private', 'key'], ['card', 'number'],
  ['card', 'num'], ['card', 'no'], ['cc', 'number'], ['cc', 'num'], ['cc', 'no'],
  ['credit', 'card'], ['security', 'code'], ['account', 'number'], ['account', 'key'],
  ['verification', 'code'], ['recovery', 'code'], ['recovery', 'codes'], ['backup', 'code'],
  ['backup', 'codes'], ['recovery', 'phrase'], ['seed', 'phrase'],
];

// Words that never make a name secret although they contain a secret word.
export const NOT_SECRET_WORDS = [
  'tokens', 'tokenizer', 'tokenize', 'tokenized', 'tokenization', 'secretary', 'secretariat',
];

// A last word that says the value is about the secret, not the secret itself (tokenType,
// passwordHint, sessionExpires, csrfHeaderName).
export const META_WORDS = [
  'length', 'len', 'count', 'size', 'type', 'kind', 'name', 'names', 'label', 'hint', 'field',
  'fields', 'policy', 'rule', 'rules', 'required', 'present', 'filled', 'enabled', 'disabled',
  'visible', 'expires', 'expiry', 'expiration', 'expired', 'exp', 'ttl', 'age', 'max', 'min', 'url',
  'uri', 'endpoint', 'path', 'domain', 'format', 'status', 'header', 'param', 'strength', 'reset',
  'changed', 'updated', 'created', 'at', 'date', 'time', 'timeout', 'mode', 'version', 'valid',
  'invalid', 'error', 'errors', 'message', 'placeholder', 'prompt', 'icon',
];

// Keys and tokens known by their shape, found at a word start: the exact (case-sensitive) prefix,
// then a body of letters, digits, '_' and '-' running to the end of the word, at least minBody or
// exactly exactBody characters long; bodyChars "A-Z0-9" allows only capitals and digits there,
// needsDigit asks for a digit in it. The first shape that fits names the marker.
export const KEY_SHAPES = [
  ['sk_live_', 10, 0, false, false, 'stripe_key'],
  ['sk_test_', 10, 0, false, false, 'stripe_key'],
  ['rk_live_', 10, 0, false, false, 'stripe_key'],
  ['rk_test_', 10, 0, false, false, 'stripe_key'],
  ['sk-', 20, 0, false, false, 'api_key'],
  ['ghp_', 30, 0, false, false, 'github_token'],
  ['gho_', 30, 0, false, false, 'github_token'],
  ['ghu_', 30, 0, false, false, 'github_token'],
  ['ghs_', 30, 0, false, false, 'github_token'],
  ['ghr_', 30, 0, false, false, 'github_token'],
  ['github_pat_', 30, 0, false, false, 'github_token'],
  ['glpat-', 20, 0, false, false, 'gitlab_token'],
  ['xoxa-', 10, 0, false, false, 'slack_token'],
  ['xoxb-', 10, 0, false, false, 'slack_token'],
  ['xoxe-', 10, 0, false, false, 'slack_token'],
  ['xoxp-', 10, 0, false, false, 'slack_token'],
  ['xoxr-', 10, 0, false, false, 'slack_token'],
  ['xoxs-', 10, 0, false, false, 'slack_token'],
  ['npm_', 36, 0, false, false, 'npm_token'],
  ['hf_', 30, 0, false, false, 'hf_token'],
  ['AKIA', 16, 16, true, false, 'aws_key'],
  ['ASIA', 16, 16, true, true, 'aws_key'], // "ASIAN…" is a word; real ones have digits
  ['AIza', 35, 35, false, false, 'google_api_key'],
  ['ya29.', 20, 0, false, false, 'google_oauth_token'], // the '.' is part of the prefix
].map(([prefix, minBody, exactBody, upperDigits, needsDigit, name]) =>
  ({ prefix, minBody, exactBody, upperDigits, needsDigit, name }));

// "Bearer <token>" and "Basic <base64>" (any ASCII case): the scheme word stays, the credential
// goes, under the scheme's name. The credential must have 8+ characters with a digit or a symbol
// ("Bearer instruments" stays).
export const AUTH_SCHEMES = [
  'bearer', 'basic',
];

// "<name>: <value>" at a line start masks the rest of the line for these headers (any ASCII case)
// and for any secret name with a '-' (X-Api-Key): a cookie header's value has spaces and ';' in it.
export const LINE_HEADERS = [
  'cookie', 'set-cookie', 'authorization', 'proxy-authorization',
];

// What a page says just before a secret, as [text, the marker's name]: the text, then "is", ':' or
// nothing, then the secret. A short code only after one of these: a six-digit number alone is an
// order, a date or a price. Single words already secret as names (password, token, …) only add
// "is": their "name: value" and "name=value" forms are the name rules. One ASCII word ("pin",
// "token") is too common a word to be trusted without "is" or ':'. Within each list, and code
// before key, the first phrase that fits names the marker.
export const PHRASES = [
  // Followed by a short code: 3 to 12 digits (two groups of three or four may be split by a space),
  // or 4 to 32 letters, digits and inner hyphens with two digits at least.
  ['verification code', 'verification_code', 'code'],
  ['confirmation code', 'confirmation_code', 'code'],
  ['security code', 'security_code', 'code'],
  ['one-time code', 'one_time_code', 'code'],
  ['one time code', 'one_time_code', 'code'],
  ['one-time passcode', 'one_time_code', 'code'],
  ['one-time password', 'one_time_code', 'code'],
  ['one time password', 'one_time_code', 'code'],
  ['login code', 'login_code', 'code'],
  ['sign-in code', 'login_code', 'code'],
  ['authentication code', 'auth_code', 'code'],
  ['auth code', 'auth_code', 'code'],
  ['access code', 'access_code', 'code'],
  ['activation code', 'activation_code', 'code'],
  ['recovery code', 'recovery_code', 'code'],
  ['backup code', 'backup_code', 'code'],
  ['2fa code', 'otp', 'code'],
  ['mfa code', 'otp', 'code'],
  ['sms code', 'otp', 'code'],
  ['otp', 'otp', 'code'],
  ['totp', 'otp', 'code'],
  ['pin', 'pin', 'code'],
  ['pin code', 'pin', 'code'],
  ['passcode', 'passcode', 'code'],
  ['your code', 'code', 'code'],
  ['code de v\u00e9rification', 'verification_code', 'code'], // code de vérification
  ['code de confirmation', 'confirmation_code', 'code'],
  ['code de s\u00e9curit\u00e9', 'security_code', 'code'], // code de sécurité
  ['code \u00e0 usage unique', 'one_time_code', 'code'], // code à usage unique
  ['code de r\u00e9cup\u00e9ration', 'recovery_code', 'code'], // code de récupération
  ['code de secours', 'backup_code', 'code'],
  ['code pin', 'pin', 'code'],
  ['votre code', 'code', 'code'],
  ['\u9a8c\u8bc1\u7801', 'verification_code', 'code'], // 验证码
  ['\u6821\u9a8c\u7801', 'verification_code', 'code'], // 校验码
  ['\u52a8\u6001\u7801', 'one_time_code', 'code'], // 动态码
  ['\u52a8\u6001\u5bc6\u7801', 'one_time_code', 'code'], // 动态密码
  ['\u6062\u590d\u7801', 'recovery_code', 'code'], // 恢复码
  ['\u5907\u7528\u7801', 'backup_code', 'code'], // 备用码

  // Followed by a password or a key: after "is", printable ASCII of 6+ characters with a digit or a
  // symbol, or 16+; after ':', the same, ending its line; with nothing between, 20+ letters, digits
  // and +/_-= with a letter and a digit.
  ['password', 'password', 'key'],
  ['passphrase', 'passphrase', 'key'],
  ['secret', 'secret', 'key'],
  ['token', 'token', 'key'],
  ['api key', 'api_key', 'key'],
  ['access key', 'access_key', 'key'],
  ['secret key', 'secret_key', 'key'],
  ['private key', 'private_key', 'key'],
  ['account key', 'account_key', 'key'],
  ['client secret', 'client_secret', 'key'],
  ['mot de passe', 'password', 'key'],
  ['cl\u00e9 priv\u00e9e', 'private_key', 'key'], // clé privée
  ['cl\u00e9 secr\u00e8te', 'secret_key', 'key'], // clé secrète
  ['cl\u00e9 api', 'api_key', 'key'], // clé api
  ['cl\u00e9 d\'api', 'api_key', 'key'], // clé d'api
  ['\u5bc6\u7801', 'password', 'key'], // 密码
  ['\u79c1\u94a5', 'private_key', 'key'], // 私钥
  ['\u5bc6\u94a5', 'secret_key', 'key'], // 密钥
].map(([text, name, kind]) => ({ text, name, kind }));

// Words between a phrase and its secret: "is", "est", "是", "为".
export const CONNECTOR_WORDS = [
  'is', 'was', 'est', '\u662f', '\u4e3a', '\u70ba',
];

// "482913 is your verification code", "G-482913 est votre code": a code, then a lead and, within
// four more words, an end word.
export const CODE_LEADS = [
  'is your', 'est votre',
];

// The words that end such a phrase.
export const CODE_ENDS = [
  'code', 'passcode', 'pin', 'otp',
];
