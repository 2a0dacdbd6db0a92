/**
 * How the RPC controller checks a broker caller's credential: the gateway's
 * own API-key / OIDC authenticator (provided by `GatewayModule`), so a broker
 * caller gets the same owner, hence the same stored state and per-owner
 * limits, as the same key over HTTP.
 */
export interface RpcCallerAuthenticator {
  readonly enabled: boolean;
  /** The owner for an `Authorization` header value; throws the gateway's 401 when it is missing or wrong. */
  authenticate(authorization: string | undefined): Promise<string | null>;
}

export const RPC_CALLER_AUTHENTICATOR = Symbol('RPC_CALLER_AUTHENTICATOR');
