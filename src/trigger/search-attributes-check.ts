// Search attributes must be registered on the server before a workflow may carry them; without them the trigger
// still works, only the Web UI cannot filter by LWS, and says how to register them.
import type { Client } from '@temporalio/client';
import type { Logger } from '../log.js';
import { allSearchAttributes } from '../workflows/search-attributes.js';

export function registerCommand(namespace: string): string {
  return allSearchAttributes
    .map(
      (k) =>
        `temporal operator search-attribute create --namespace ${namespace} --name ${k.name} --type ${k.type === 'INT' ? 'Int' : 'Keyword'}`,
    )
    .join(' && ');
}

export async function registeredSearchAttributes(client: Client, namespace: string, log: Logger): Promise<boolean> {
  try {
    const { customAttributes } = await client.connection.operatorService.listSearchAttributes({ namespace });
    const missing = allSearchAttributes.filter((k) => !(customAttributes ?? {})[k.name]).map((k) => k.name);
    if (missing.length === 0) return true;
    log.warn('search attributes missing: workflows start without them', {
      missing,
      register: registerCommand(namespace),
    });
  } catch (err) {
    log.warn('cannot list search attributes: workflows start without them', { error: (err as Error).message });
  }
  return false;
}
