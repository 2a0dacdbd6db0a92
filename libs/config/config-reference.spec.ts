import { readFileSync } from 'node:fs';
import { gatewayConfigSections } from '#src/gateway-config.loader.js';
import { renderConfigReference } from './config-reference.js';

const reference = () => renderConfigReference(gatewayConfigSections());

describe('the configuration reference', () => {
  it('is what docs/configuration.md holds: run `npm run docs:config` after changing a setting', () => {
    expect(readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8')).toBe(reference());
  });

  it("names every variable the gateway reads, with its setting, default and the validation's word for what it takes", () => {
    const text = reference();
    expect(text).toContain('| `upstream.baseUrl` | `UPSTREAM_URL` | `http://127.0.0.1:8000/v1` |');
    expect(text).toMatch(/\| `server\.port` \| `PORT` \| `8080` \| must be an integer from 0 to 65535 \|/);
    expect(text).toMatch(/\| `upstream\.dialect` \| `UPSTREAM_DIALECT` \| `responses` \| must be "responses" or "chat" \|/);
    for (const section of gatewayConfigSections()) for (const env of section.env ?? []) expect(text).toContain(`\`${env.env}\``);
  });
});
