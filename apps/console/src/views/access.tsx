import type { PrincipalView } from '../api.js';
import { ErrorNote } from './common.js';

const VIA: Record<PrincipalView['via'], string> = {
  apiKey: 'an API key',
  oauth: 'an OAuth access token',
  none: 'no key: this host takes none (one-user developer mode)',
};

function Names({ names, none }: { names: readonly string[]; none: string }) {
  return names.length === 0 ? (
    <p>{none}</p>
  ) : (
    <ul class="inline">
      {names.map((name) => (
        <li key={name}>
          <code>{name}</code>
        </li>
      ))}
    </ul>
  );
}

/** What the signed-in principal may do, as the host reads its permissions (GET /v1/principal). */
export function AccessView({ principal, error }: { principal: PrincipalView | undefined; error: string | undefined }) {
  return (
    <section aria-labelledby="access-title">
      <h2 id="access-title">Your access</h2>
      <ErrorNote error={error} />
      {principal === undefined ? null : (
        <article class="card" data-principal={principal.principal ?? ''}>
          <h3>{principal.principal === null ? 'Anyone on this machine' : <code>{principal.principal}</code>}</h3>
          <p>Signed in with {VIA[principal.via]}.</p>
          {principal.scopes === undefined ? null : (
            <>
              <h4>Scopes</h4>
              <Names names={principal.scopes} none="None this host knows." />
            </>
          )}
          <h4>Tools it may call</h4>
          <Names names={principal.tools} none="None." />
          <h4>Modes it may move a session into</h4>
          <Names names={principal.modes} none="None." />
          <h4>Approvals it may decide</h4>
          <Names names={principal.approve} none="None." />
          <h4>Sessions</h4>
          <p>{principal.sessions === 'all' ? "Every principal's." : 'Only the ones it made.'}</p>
          <h4>Administration</h4>
          <p>
            {principal.admin
              ? 'It may use the admin routes: the approvals list, the packages list and the audit trail.'
              : 'None: the approvals list, the packages list and the audit trail are not shown.'}
          </p>
        </article>
      )}
    </section>
  );
}
