// Opens flamegraph SVGs taller than the window in a real, headless browser
// (the system's chromium through playwright-core) and checks that each
// opens on its roots: every frame of depth 0 inside the first screen.
// From there a click still zooms and Escape resets. Prints TAP lines:
//   node flamegraph_roots.js FILE.svg...
'use strict';
const path = require('path');
const { chromium } = require('playwright-core');

let failed = 0;
function check(name, cond, why) {
  console.log((cond ? 'ok - ' : 'not ok - ') + name + (cond || !why ? '' : ': ' + why));
  if (!cond) failed++;
}

// Where the page stands and where its roots are, in window coordinates.
function state() {
  const roots = Array.from(document.querySelectorAll('g.f[data-d="0"] rect'))
    .map((r) => r.getBoundingClientRect());
  return {
    height: +document.documentElement.getAttribute('height'),
    window: window.innerHeight,
    scrolled: window.scrollY,
    roots: roots.length,
    top: Math.min(...roots.map((r) => r.top)),
    bottom: Math.max(...roots.map((r) => r.bottom)),
    zoomed: !document.getElementById('unzoom').classList.contains('hide'),
  };
}

async function opens_on_roots(browser, file) {
  const name = 'flamegraph: ' + path.basename(file);
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto('file://' + path.resolve(file));
  await page.waitForLoadState('load');

  const s = await page.evaluate(state);
  const where = 'page ' + s.height + ' px, window ' + s.window + ' px scrolled to ' + s.scrolled +
    ', ' + s.roots + ' roots at ' + s.top + '..' + s.bottom;
  check(name + ' is taller than two windows (' + where + ')', s.height > 2 * s.window);
  check(name + ' opens with its roots in the window', s.roots > 0 && s.top >= 0 &&
    s.bottom <= s.window, where);

  // A click on a frame in view zooms without moving the page; Escape resets.
  const spot = await page.evaluate(() => {
    const r = document.querySelector('g.f[data-d="1"] rect, g.f[data-d="0"] rect')
      .getBoundingClientRect();
    return { x: r.left + Math.min(r.width / 2, 20), y: r.top + r.height / 2 };
  });
  await page.mouse.click(spot.x, spot.y);
  const z = await page.evaluate(state);
  await page.keyboard.press('Escape');
  const u = await page.evaluate(state);
  check(name + ': a click there zooms in place, Escape resets', z.zoomed && !u.zoomed &&
    z.scrolled === s.scrolled && z.bottom <= z.window,
    'zoomed ' + z.zoomed + ' scrolled ' + s.scrolled + ' -> ' + z.scrolled + ', reset ' +
    !u.zoomed);
  check(name + ': no script errors', errors.length === 0, errors.join(' | '));
  await page.close();
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  for (const file of process.argv.slice(2))
    await opens_on_roots(browser, file);
  await browser.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('not ok - flamegraph: the browser ran: ' + e.message); process.exit(1); });
