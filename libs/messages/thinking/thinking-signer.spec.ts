import { ThinkingSigner } from './thinking-signer.js';

describe('ThinkingSigner', () => {
  const signer = new ThinkingSigner('k'.repeat(32));

  it('signs with the key and verifies only the same text under the same key', () => {
    const signature = signer.sign('Check the lockfile.');
    expect(signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(signer.verify('Check the lockfile.', signature)).toBe(true);
    expect(signer.verify('Check the lockfile!', signature)).toBe(false);
    expect(new ThinkingSigner('j'.repeat(32)).verify('Check the lockfile.', signature)).toBe(false);
    expect(signer.verify('Check the lockfile.', signature.slice(0, -2))).toBe(false);
    // An Anthropic signature (opaque base64 from another provider) never verifies.
    expect(signer.verify('Check the lockfile.', 'EqQBCkgIBxABGAIqQKGXxb1vR8ysw2Q0tVz3c9X5Q==')).toBe(false);
  });

  it('without a key signs nothing and verifies nothing', () => {
    const keyless = new ThinkingSigner(null);
    expect(keyless.enabled).toBe(false);
    expect(keyless.sign('x')).toBe('');
    expect(keyless.verify('x', signer.sign('x'))).toBe(false);
  });
});
