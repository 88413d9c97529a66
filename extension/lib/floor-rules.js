// SPDX-License-Identifier: GPL-3.0-or-later
// The URL floor's built-in tables, made by build-aux/gen-floor-rules.py from
// src/core/policy/floor-rules.json, the data chp-url-floor.c is built from too. Do not edit: edit the
// data and run `python3 build-aux/gen-floor-rules.py --js extension/lib/floor-rules.js
// src/core/policy/floor-rules.json` (the floor-rules-js test fails until this file is remade).

// Hosts match themselves and their subdomains; a path matches itself and everything under it.
// Within a level the first rule that matches gives the reason.
export const BUILTIN_RULES = Object.freeze([
  // Extension stores: installing an extension is installing code with the person's powers.
  ['chromewebstore.google.com', null, 'blind', 'extension_store'],
  ['chrome.google.com', '/webstore', 'blind', 'extension_store'],
  ['microsoftedge.microsoft.com', '/addons', 'blind', 'extension_store'],
  ['addons.mozilla.org', null, 'blind', 'extension_store'],
  ['addons.opera.com', null, 'blind', 'extension_store'],

  // Password-manager web vaults: every secret the person has. Whole vendor domains where the vault
  // shares it with the marketing site (blind marketing pages cost nothing).
  ['vault.bitwarden.com', null, 'blind', 'password_manager'],
  ['vault.bitwarden.eu', null, 'blind', 'password_manager'],
  ['1password.com', null, 'blind', 'password_manager'],
  ['1password.ca', null, 'blind', 'password_manager'],
  ['1password.eu', null, 'blind', 'password_manager'],
  ['lastpass.com', null, 'blind', 'password_manager'],
  ['lastpass.eu', null, 'blind', 'password_manager'],
  ['dashlane.com', null, 'blind', 'password_manager'],
  ['passwords.google.com', null, 'blind', 'password_manager'],
  ['passwords.google', null, 'blind', 'password_manager'],
  ['keepersecurity.com', null, 'blind', 'password_manager'],
  ['keepersecurity.eu', null, 'blind', 'password_manager'],
  ['nordpass.com', null, 'blind', 'password_manager'],
  ['pass.proton.me', null, 'blind', 'password_manager'],
  ['roboform.com', null, 'blind', 'password_manager'],
  ['vault.zoho.com', null, 'blind', 'password_manager'],
  ['vault.zoho.eu', null, 'blind', 'password_manager'],

  // Identity providers' sign-in hosts: their password step is not always on screen when the page is
  // checked, and signing in is the person's to do (a handoff), never an agent's.
  ['accounts.google.com', null, 'blind', 'sign_in'],
  ['login.microsoftonline.com', null, 'blind', 'sign_in'],
  ['login.live.com', null, 'blind', 'sign_in'],
  ['idmsa.apple.com', null, 'blind', 'sign_in'],
  ['github.com', '/login', 'blind', 'sign_in'],
  ['github.com', '/session', 'blind', 'sign_in'],

  // Money, where the host does not say "bank". Not a complete list: the person adds theirs.
  ['chase.com', null, 'blind', 'bank'],
  ['wellsfargo.com', null, 'blind', 'bank'],
  ['citi.com', null, 'blind', 'bank'],
  ['capitalone.com', null, 'blind', 'bank'],
  ['americanexpress.com', null, 'blind', 'bank'],
  ['paypal.com', null, 'blind', 'bank'],
  ['hsbc.com', null, 'blind', 'bank'],
  ['hsbc.co.uk', null, 'blind', 'bank'],
  ['barclays.co.uk', null, 'blind', 'bank'],
  ['natwest.com', null, 'blind', 'bank'],
  ['santander.co.uk', null, 'blind', 'bank'],
  ['revolut.com', null, 'blind', 'bank'],
  ['wise.com', null, 'blind', 'bank'],
  ['monzo.com', null, 'blind', 'bank'],
  ['credit-agricole.fr', null, 'blind', 'bank'],
  ['societegenerale.fr', null, 'blind', 'bank'],
  ['icbc.com.cn', null, 'blind', 'bank'],
  ['ccb.com', null, 'blind', 'bank'],
  ['boc.cn', null, 'blind', 'bank'],
  ['cmbchina.com', null, 'blind', 'bank'],
  ['abchina.com', null, 'blind', 'bank'],
  ['alipay.com', null, 'blind', 'bank'],

  // Hands-only: account and security settings of the providers that hold most people's other
  // accounts (recovery email, 2FA, app passwords, tokens). Reading them helps an agent answer
  // "which devices are signed in"; changing them is only ever the person's.
  ['myaccount.google.com', null, 'hands-only', 'account_settings'],
  ['account.microsoft.com', null, 'hands-only', 'account_settings'],
  ['account.live.com', null, 'hands-only', 'account_settings'],
  ['appleid.apple.com', null, 'hands-only', 'account_settings'],
  ['account.apple.com', null, 'hands-only', 'account_settings'],
  ['github.com', '/settings', 'hands-only', 'account_settings'],
].map(([host, path, level, reason]) =>
  Object.freeze({ host, path, level, reason })));

// Schemes of the browser's own pages (reason browser_page); every other scheme that is not http(s)
// is not_web.
export const BROWSER_SCHEMES = Object.freeze([
  'about',
  'brave',
  'chrome',
  'chrome-error',
  'chrome-extension',
  'chrome-native',
  'chrome-search',
  'chrome-untrusted',
  'devtools',
  'edge',
  'extension',
  'isolated-app',
  'moz-extension',
  'opera',
  'resource',
  'safari-web-extension',
  'view-source',
  'vivaldi',
]);

// A host with a label containing one of these is a bank's (reason bank), looked for in the ASCII
// and in the decoded form. "banque" because French is one of the project's languages.
export const BANK_WORDS = Object.freeze(['bank', 'banque']);

// Letters from other scripts that look like the Latin letters of the bank words (after NFKD, mark
// stripping and lowercasing, which already handle accents, full-width and small forms). Enough to
// catch "bаnk" with a Cyrillic а; not a full Unicode confusables table.
export const CONFUSABLES = Object.freeze([
  [0x0430, 'a'],
  [0x03B1, 'a'],
  [0x0251, 'a'],
  [0x1D00, 'a'],
  [0x0250, 'a'],
  [0x044C, 'b'],
  [0x0185, 'b'],
  [0x0432, 'b'],
  [0x03B2, 'b'],
  [0x0299, 'b'],
  [0x13CF, 'b'],
  [0x15AF, 'b'],
  [0x0253, 'b'],
  [0x0183, 'b'],
  [0x043F, 'n'],
  [0x0578, 'n'],
  [0x057C, 'n'],
  [0x0274, 'n'],
  [0x03B7, 'n'],
  [0x0572, 'n'],
  [0x043A, 'k'],
  [0x03BA, 'k'],
  [0x049B, 'k'],
  [0x049D, 'k'],
  [0x049F, 'k'],
  [0x04A1, 'k'],
  [0x1D0B, 'k'],
  [0x0138, 'k'],
  [0x0199, 'k'],
  [0x051B, 'q'],
  [0x0566, 'q'],
  [0x03C5, 'u'],
  [0x057D, 'u'],
  [0x1D1C, 'u'],
  [0x028B, 'u'],
  [0x0435, 'e'],
  [0x04BD, 'e'],
  [0x03B5, 'e'],
  [0x0454, 'e'],
].map((pair) => Object.freeze(pair)));
