import { validateGatewayConfig } from '../../../libs/config/config.loader.js';
import { listeningMessage } from './startup-message.js';

describe('listeningMessage', () => {
  it('names the upstream without its credentials or query secrets', () => {
    const config = validateGatewayConfig({ upstream: { baseUrl: 'http://user:hunter2@models.internal:8000/v1?api_key=sekrit' } });
    const line = listeningMessage(config);
    expect(line).toContain('models.internal:8000/v1');
    expect(line).not.toContain('hunter2');
    expect(line).not.toContain('sekrit');
  });
});
