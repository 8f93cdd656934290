// Drives a flamegraph SVG in a real, headless browser (the system's
// chromium through playwright-core) and prints TAP lines:
//   node flamegraph.js FILE.svg LABEL_TO_CLICK SEARCH_TERM EXPECTED_SHARE SCREENSHOT.png
// LABEL_TO_CLICK starts a frame's label; EXPECTED_SHARE is the share (%)
// the search must report, within a point.
'use strict';
const path = require('path');
const { chromium } = require('playwright-core');

const [file, clickLabel, term, expected, shot] = process.argv.slice(2);
let failed = 0;
function check(name, cond, why) {
  console.log((cond ? 'ok - ' : 'not ok - ') + name + (cond || !why ? '' : ': ' + why));
  if (!cond) failed++;
}

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('dialog', (d) => d.accept(term));
  await page.goto('file://' + path.resolve(file));
  await page.waitForLoadState('load');

  const frames = await page.$$eval('g.f', (gs) => gs.length);
  check('flamegraph: the page loads with its frames (' + frames + ')', frames > 0);

  // Zoom: the clicked frame spans the whole width, the reset button shows.
  const target = await page.evaluateHandle((l) => Array.from(document.querySelectorAll('g.f'))
    .find((g) => g.querySelector('title').textContent.startsWith(l)), clickLabel);
  const before = await target.evaluate((g) => +g.querySelector('rect').getAttribute('width'));
  await target.click();
  const after = await target.evaluate((g) => +g.querySelector('rect').getAttribute('width'));
  const total = await page.evaluate(() => +document.documentElement.getAttribute('width') -
    2 * +document.documentElement.getAttribute('data-pad'));
  const resetShown = await page.$eval('#unzoom', (e) => !e.classList.contains('hide'));
  check('flamegraph: clicking "' + clickLabel + '" zooms it to the full width',
    after > before && Math.abs(after - total) < 0.5 && resetShown,
    'width ' + before + ' -> ' + after + ' of ' + total + ', reset ' + resetShown);
  await page.click('#unzoom');
  const back = await target.evaluate((g) => +g.querySelector('rect').getAttribute('width'));
  check('flamegraph: Reset zoom restores the width', Math.abs(back - before) < 0.5,
    back + ' vs ' + before);

  // Search: matches painted, their share shown.
  await page.click('#search');
  const text = await page.$eval('#matched', (e) => e.textContent);
  const painted = await page.$$eval('rect[fill="rgb(230,0,230)"]', (r) => r.length);
  const share = parseFloat(text.replace(/[^0-9.]/g, ''));
  check('flamegraph: searching "' + term + '" paints ' + painted + ' frames and shows ' + text +
    ' (expected ' + expected + '%)', painted > 0 && Math.abs(share - parseFloat(expected)) <= 1,
    text);
  // The whole picture: an SVG document does not scroll for a full-page shot.
  const height = await page.evaluate(() => +document.documentElement.getAttribute('height'));
  await page.setViewportSize({ width: 1220, height: Math.min(Math.max(height, 200), 4000) });
  await page.screenshot({ path: shot });
  check('flamegraph: no script errors', errors.length === 0, errors.join(' | '));
  await browser.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('not ok - flamegraph: the browser ran: ' + e.message); process.exit(1); });
