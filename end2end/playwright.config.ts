import { defineConfig } from '@playwright/test';

// The server is started by scripts/e2e.sh, which passes its address here.
const baseURL = process.env.AIRLOCK_BASE_URL;
if (!baseURL) throw new Error('AIRLOCK_BASE_URL is not set (run scripts/e2e.sh)');

const chromium = {
  browserName: 'chromium' as const,
  launchOptions: {
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  },
};

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list']],
  outputDir: './test-results',
  use: { baseURL, trace: 'retain-on-failure', screenshot: 'only-on-failure' },
  projects: [
    { name: 'hydrated', use: { ...chromium, javaScriptEnabled: true }, testIgnore: /nojs\.spec/ },
    { name: 'no-js', use: { ...chromium, javaScriptEnabled: false }, testMatch: /nojs\.spec/ },
  ],
});
