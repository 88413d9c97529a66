// SPDX-License-Identifier: GPL-3.0-or-later
// Fills extension pages with their translated strings: a data-i18n attribute names the message for
// the text; data-i18n-title, data-i18n-aria-label and data-i18n-placeholder name those attributes.

const ATTRIBUTES = [
  ['data-i18n-title', 'title'],
  ['data-i18n-aria-label', 'aria-label'],
  ['data-i18n-placeholder', 'placeholder'],
];

/** chrome.i18n.getMessage when there is one (an extension page), else nothing (Node tests). */
export function t(key, substitutions) {
  const get = globalThis.chrome?.i18n?.getMessage;
  return get ? get(key, substitutions) : '';
}

export function localize(root = document, getMessage = t) {
  for (const el of root.querySelectorAll('[data-i18n]')) {
    const text = getMessage(el.getAttribute('data-i18n'));
    if (text) el.textContent = text;
  }
  for (const [attr, target] of ATTRIBUTES) {
    for (const el of root.querySelectorAll(`[${attr}]`)) {
      const text = getMessage(el.getAttribute(attr));
      if (text) el.setAttribute(target, text);
    }
  }
  const lang = getMessage('@@ui_locale');
  if (lang && root.documentElement) root.documentElement.lang = lang.replace('_', '-');
}
