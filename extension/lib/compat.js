// SPDX-License-Identifier: GPL-3.0-or-later
// What differs between the browsers this one extension runs in (Chromium's family and Firefox),
// found by looking at what is there, never by a build flag: the same files load in both
// (docs/extension.md, "Firefox"). Only the facts that no API answers the same way in both live
// here; everything else is plain `chrome.*`, which Firefox provides with promises too.

/** Whether this is Firefox (or another Gecko browser): its extension pages are moz-extension://. */
export function isGecko(runtime = globalThis.chrome?.runtime) {
  try {
    return typeof runtime?.getURL === 'function' && runtime.getURL('').startsWith('moz-extension:');
  } catch {
    return false;
  }
}

/**
 * The browser's name, shown to the person in the app's pairing window and browser list.
 * Chromium's family says it in `navigator.userAgentData` (which Firefox does not have); Firefox
 * only in its user agent string, where "Firefox/" is its own mark.
 */
export function browserName(nav = globalThis.navigator, runtime = globalThis.chrome?.runtime) {
  const brands = nav?.userAgentData?.brands?.map((b) => b.brand) ?? [];
  for (const name of ['Microsoft Edge', 'Brave', 'Opera', 'Google Chrome', 'Chromium']) {
    if (brands.includes(name)) return name;
  }
  if (isGecko(runtime) || /\bFirefox\//.test(nav?.userAgent ?? '')) return 'Firefox';
  return 'Chromium';
}

