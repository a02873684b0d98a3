// The Kubernetes API requests each process can make, derived from its source with the TypeScript type checker: every
// reference to a @kubernetes/client-node function in the files a process runs is looked up in the tables below and
// turned into (API group, resource, verb) permissions. A client-node function that no table knows is reported as
// unmapped, so that a new kind of call forces a decision about its RBAC (test/deploy/rbac.test.ts).
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../../tools/stack/paths.js';

/** A permission as RBAC sees it: resource may carry a subresource (`leaderworkersets/status`); group '' is core. */
export interface Permission {
  group: string;
  resource: string;
  verb: string;
}

/** Where a permission comes from. */
export interface Site {
  file: string;
  line: number;
  /** The client-node function, e.g. `CoreV1Api.readNamespacedPod`, `makeInformer`, `Watch.watch`. */
  api: string;
  /** What was resolved, e.g. the custom resource or the watched path. */
  detail?: string;
}

export interface ProcessCalls {
  /** `group/resource:verb` (group `core` for '') -> the sites that need it. */
  permissions: Map<string, Site[]>;
  /** client-node functions the tables do not know. */
  unmapped: Site[];
  /** Calls whose resource could not be resolved (a non-literal plural, path or group). */
  unresolved: (Site & { reason: string })[];
  /** The source files of the process (repository-relative). */
  files: string[];
}

export function permissionKey(p: Permission): string {
  return `${p.group === '' ? 'core' : p.group}/${p.resource}:${p.verb}`;
}

export function parsePermissionKey(key: string): Permission {
  const match = /^([^/]+)\/(.+):([a-z]+)$/.exec(key);
  if (!match) throw new Error(`bad permission key ${key}`);
  const [, group = '', resource = '', verb = ''] = match;
  return { group: group === 'core' ? '' : group, resource, verb };
}

type Triple = [group: string, resource: string, verb: string];

/**
 * Typed API methods -> the request each makes. Methods listed but unused cost nothing: only the calls found in the
 * source become permissions.
 */
export const TYPED_CALLS: Record<string, Triple> = {
  'CoreV1Api.readNamespacedPod': ['', 'pods', 'get'],
  'CoreV1Api.listNamespacedPod': ['', 'pods', 'list'],
  'CoreV1Api.listPodForAllNamespaces': ['', 'pods', 'list'],
  'CoreV1Api.createNamespacedPod': ['', 'pods', 'create'],
  'CoreV1Api.replaceNamespacedPod': ['', 'pods', 'update'],
  'CoreV1Api.patchNamespacedPod': ['', 'pods', 'patch'],
  'CoreV1Api.deleteNamespacedPod': ['', 'pods', 'delete'],
  'CoreV1Api.readNamespacedService': ['', 'services', 'get'],
  'CoreV1Api.listNamespacedService': ['', 'services', 'list'],
  'CoreV1Api.createNamespacedService': ['', 'services', 'create'],
  'CoreV1Api.replaceNamespacedService': ['', 'services', 'update'],
  'CoreV1Api.patchNamespacedService': ['', 'services', 'patch'],
  'CoreV1Api.deleteNamespacedService': ['', 'services', 'delete'],
  'CoreV1Api.createNamespacedEvent': ['', 'events', 'create'],
  'CoreV1Api.patchNamespacedEvent': ['', 'events', 'patch'],
  'EventsV1Api.createNamespacedEvent': ['events.k8s.io', 'events', 'create'],
  'AppsV1Api.readNamespacedStatefulSet': ['apps', 'statefulsets', 'get'],
  'AppsV1Api.listNamespacedStatefulSet': ['apps', 'statefulsets', 'list'],
  'AppsV1Api.listStatefulSetForAllNamespaces': ['apps', 'statefulsets', 'list'],
  'AppsV1Api.createNamespacedStatefulSet': ['apps', 'statefulsets', 'create'],
  'AppsV1Api.replaceNamespacedStatefulSet': ['apps', 'statefulsets', 'update'],
  'AppsV1Api.patchNamespacedStatefulSet': ['apps', 'statefulsets', 'patch'],
  'AppsV1Api.deleteNamespacedStatefulSet': ['apps', 'statefulsets', 'delete'],
  'AppsV1Api.readNamespacedStatefulSetStatus': ['apps', 'statefulsets/status', 'get'],
  'CoreV1Api.readNamespace': ['', 'namespaces', 'get'],
  'CoreV1Api.readNamespacedSecret': ['', 'secrets', 'get'],
  'CoreV1Api.createNamespacedSecret': ['', 'secrets', 'create'],
  'CoreV1Api.replaceNamespacedSecret': ['', 'secrets', 'update'],
  'AdmissionregistrationV1Api.readMutatingWebhookConfiguration': [
    'admissionregistration.k8s.io',
    'mutatingwebhookconfigurations',
    'get',
  ],
  'AdmissionregistrationV1Api.patchMutatingWebhookConfiguration': [
    'admissionregistration.k8s.io',
    'mutatingwebhookconfigurations',
    'patch',
  ],
};

/** CustomObjectsApi methods -> verb (and subresource); group and plural come from the call's argument. */
export const CUSTOM_OBJECT_CALLS: Record<string, { verb: string; subresource?: string }> = {
  'CustomObjectsApi.getNamespacedCustomObject': { verb: 'get' },
  'CustomObjectsApi.getClusterCustomObject': { verb: 'get' },
  'CustomObjectsApi.listNamespacedCustomObject': { verb: 'list' },
  'CustomObjectsApi.listClusterCustomObject': { verb: 'list' },
  'CustomObjectsApi.createNamespacedCustomObject': { verb: 'create' },
  'CustomObjectsApi.replaceNamespacedCustomObject': { verb: 'update' },
  'CustomObjectsApi.patchNamespacedCustomObject': { verb: 'patch' },
  'CustomObjectsApi.deleteNamespacedCustomObject': { verb: 'delete' },
  'CustomObjectsApi.getNamespacedCustomObjectStatus': { verb: 'get', subresource: 'status' },
  'CustomObjectsApi.replaceNamespacedCustomObjectStatus': { verb: 'update', subresource: 'status' },
  'CustomObjectsApi.patchNamespacedCustomObjectStatus': { verb: 'patch', subresource: 'status' },
};

/**
 * Functions that take a URL path instead of a typed method: they apply their verbs to every API path string
 * (`/api/...`, `/apis/...`) in the process's source, since the path usually travels through variables.
 */
export const PATH_CALLS: Record<string, string[]> = {
  'Watch.watch': ['watch'],
  // An informer lists (through the list function it is given, a typed call of its own) and watches its path.
  makeInformer: ['list', 'watch'],
};

/**
 * This project's JSON calls (src/kube/kube-json.ts): a JsonResource method -> its verb. The resource comes from
 * the JsonResource's type argument (JSON_RESOURCE_TYPES), as `c.pods.read(...)` is a `JsonResource<V1Pod>` call.
 */
export const JSON_RESOURCE_CALLS: Record<string, string> = {
  'JsonResource.read': 'get',
  'JsonResource.list': 'list',
  'JsonResource.listAll': 'list',
  'JsonResource.create': 'create',
  'JsonResource.replace': 'update',
  'JsonResource.mergePatch': 'patch',
  'JsonResource.jsonPatch': 'patch',
  'JsonResource.delete': 'delete',
};

/** The object type a JsonResource is made for -> its API group and resource. */
export const JSON_RESOURCE_TYPES: Record<string, [group: string, resource: string]> = {
  V1Pod: ['', 'pods'],
  V1StatefulSet: ['apps', 'statefulsets'],
  V1Service: ['', 'services'],
  EventJson: ['', 'events'],
  LeaderWorkerSet: ['leaderworkerset.x-k8s.io', 'leaderworkersets'],
  V1Namespace: ['', 'namespaces'],
  V1Node: ['', 'nodes'],
  V1ControllerRevision: ['apps', 'controllerrevisions'],
};

/** The module whose JsonResource methods send the requests; its `kubeCall` is called only there. */
const KUBE_JSON = join(repoRoot, 'src', 'kube', 'kube-json.ts');

/** client-node functions that send no API request (or whose request is accounted for by another entry). */
export const NO_REQUEST = new Set([
  'KubeConfig.makeApiClient',
  'KubeConfig.getCurrentCluster',
  'KubeConfig.getCurrentContext',
  'KubeConfig.loadFromDefault',
  'KubeConfig.loadFromCluster',
  'KubeConfig.loadFromFile',
  'setHeaderOptions',
  // Prepares the credentials of a request that kube-json.ts sends: counted at its JsonResource method.
  'KubeConfig.applyToHTTPSOptions',
  // Prepares a typed call's credentials and headers (src/config/kubernetes.ts adds the User-Agent): counted at the call.
  'KubeConfig.applySecurityAuthentication',
  'RequestContext.setHeaderParam',
  // The informer's own methods: its list and watch are counted at makeInformer, or at its list function and the
  // Watch.watch of its watch (src/kube/informer.ts builds the ListWatch itself, on a BoundedWatch).
  'Informer.on',
  'Informer.off',
  'Informer.start',
  'Informer.stop',
  'ListWatch.on',
  'ListWatch.off',
  'ListWatch.start',
  'ListWatch.stop',
]);

/** The processes that run in the cluster, and the files their RBAC is derived from (besides what they import). */
export const PROCESSES = {
  worker: { entry: 'src/worker/main.ts', dirs: ['src/activities'] },
  trigger: { entry: 'src/trigger/main.ts', dirs: ['src/trigger'] },
  // Its Kubernetes client comes in by dynamic import (main.ts); the calls are in the directory, scanned whole.
  admission: { entry: 'src/admission/main.ts', dirs: ['src/admission'] },
} as const;

export type ProcessName = keyof typeof PROCESSES;

function tsFilesUnder(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

const srcDir = join(repoRoot, 'src');
const isOurs = (file: string) => file.startsWith(srcDir + '/') && !file.endsWith('.d.ts');
const isClientNode = (file: string) => file.includes('/node_modules/@kubernetes/client-node/');

let program: ts.Program | undefined;

function getProgram(): ts.Program {
  if (program) return program;
  const configPath = join(repoRoot, 'tsconfig.json');
  const config = ts.readConfigFile(configPath, (p) => ts.sys.readFile(p));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, repoRoot, { noEmit: true }, configPath);
  const roots = [...Object.keys(PROCESSES).flatMap((name) => processRoots(name as ProcessName)), ...fixtureFiles()];
  program = ts.createProgram({ rootNames: roots, options: parsed.options });
  return program;
}

/** Value imports and re-exports of a file that resolve into src/ (type-only ones run nothing). */
function importsOf(p: ts.Program, sf: ts.SourceFile): string[] {
  const out: string[] = [];
  const add = (spec: ts.Expression | undefined) => {
    if (!spec || !ts.isStringLiteral(spec)) return;
    const resolved = ts.resolveModuleName(spec.text, sf.fileName, p.getCompilerOptions(), ts.sys).resolvedModule;
    if (resolved && isOurs(resolved.resolvedFileName)) out.push(resolved.resolvedFileName);
  };
  for (const stmt of sf.statements) {
    if (ts.isImportDeclaration(stmt)) {
      const clause = stmt.importClause;
      if (clause?.isTypeOnly) continue;
      const bindings = clause?.namedBindings;
      const onlyTypes =
        clause !== undefined &&
        clause.name === undefined &&
        bindings !== undefined &&
        ts.isNamedImports(bindings) &&
        bindings.elements.length > 0 &&
        bindings.elements.every((e) => e.isTypeOnly);
      if (!onlyTypes) add(stmt.moduleSpecifier);
    } else if (ts.isExportDeclaration(stmt) && !stmt.isTypeOnly) {
      add(stmt.moduleSpecifier);
    }
  }
  return out;
}

function processRoots(name: ProcessName): string[] {
  const def = PROCESSES[name];
  return [join(repoRoot, def.entry), ...def.dirs.flatMap((d) => tsFilesUnder(d))];
}

/** Sources that show what the scanner reports (test/deploy/fixtures): never run, only scanned. */
export function fixtureFiles(): string[] {
  return tsFilesUnder('test/deploy/fixtures');
}

/** The roots and every file of src/ they import, transitively. */
export function reachableFiles(roots: string[]): string[] {
  const p = getProgram();
  const queue = [...roots];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const sf = p.getSourceFile(file);
    if (!sf) throw new Error(`${file} is not part of the program`);
    queue.push(...importsOf(p, sf));
  }
  return [...seen].sort();
}

/** `ObjectCoreV1Api.readNamespacedPod` -> `CoreV1Api.readNamespacedPod`; functions by name. */
function apiName(decl: ts.Declaration): string | undefined {
  const name = ts.getNameOfDeclaration(decl);
  if (!name || !ts.isIdentifier(name)) return undefined;
  if (ts.isFunctionDeclaration(decl)) return name.text;
  const owner = decl.parent;
  if ((ts.isClassDeclaration(owner) || ts.isInterfaceDeclaration(owner)) && owner.name) {
    return `${owner.name.text.replace(/^Object(?=\w+Api$)/, '')}.${name.text}`;
  }
  return undefined;
}

function isFunctionLike(decl: ts.Declaration): boolean {
  return (
    ts.isMethodDeclaration(decl) ||
    ts.isMethodSignature(decl) ||
    ts.isFunctionDeclaration(decl) ||
    (ts.isPropertySignature(decl) && decl.type !== undefined && ts.isFunctionTypeNode(decl.type))
  );
}

/** The call whose callee is this identifier (`f(...)` or `x.f(...)`), if it is one. */
function callOf(id: ts.Identifier): ts.CallExpression | undefined {
  const callee = ts.isPropertyAccessExpression(id.parent) && id.parent.name === id ? id.parent : id;
  return ts.isCallExpression(callee.parent) && callee.parent.expression === callee ? callee.parent : undefined;
}

function stringLiteralType(type: ts.Type): string | undefined {
  return type.isStringLiteral() ? type.value : undefined;
}

/** The literal value of property `prop` of an object literal argument: direct, shorthand or spread. */
function literalProperty(checker: ts.TypeChecker, obj: ts.Expression, prop: string): string | undefined {
  if (!ts.isObjectLiteralExpression(obj)) {
    const type = checker.getTypeAtLocation(obj).getProperty(prop);
    return type ? stringLiteralType(checker.getTypeOfSymbolAtLocation(type, obj)) : undefined;
  }
  // Later properties win, as at run time.
  for (const element of [...obj.properties].reverse()) {
    if (ts.isPropertyAssignment(element) && element.name.getText() === prop) {
      return stringLiteralType(checker.getTypeAtLocation(element.initializer));
    }
    if (ts.isShorthandPropertyAssignment(element) && element.name.text === prop) {
      const symbol = checker.getShorthandAssignmentValueSymbol(element);
      return symbol ? stringLiteralType(checker.getTypeOfSymbolAtLocation(symbol, element)) : undefined;
    }
    if (ts.isSpreadAssignment(element)) {
      const symbol = checker.getTypeAtLocation(element.expression).getProperty(prop);
      if (symbol) return stringLiteralType(checker.getTypeOfSymbolAtLocation(symbol, element));
    }
  }
  return undefined;
}

/**
 * Whether `node` sits in an exported declaration. kube-json.ts exports the collection paths that are also watched;
 * the others serve only its JsonResource methods, whose calls are counted where they are made.
 */
function inExportedDeclaration(node: ts.Node): boolean {
  for (let n: ts.Node | undefined = node; n; n = n.parent) {
    if (ts.isVariableStatement(n) || ts.isFunctionDeclaration(n)) {
      return (ts.getCombinedModifierFlags(n as ts.Declaration) & ts.ModifierFlags.Export) !== 0;
    }
  }
  return false;
}

/** The text of a string or template literal, with `*` for a non-literal substitution. */
function evaluatePath(checker: ts.TypeChecker, node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node)) {
    return (
      node.head.text +
      node.templateSpans
        .map((s) => (stringLiteralType(checker.getTypeAtLocation(s.expression)) ?? '*') + s.literal.text)
        .join('')
    );
  }
  return undefined;
}

/** `/api/v1/namespaces/*\/pods` -> core pods; `/apis/apps/v1/statefulsets` -> apps statefulsets. */
export function parseApiPath(path: string): { group: string; resource: string } | undefined {
  const parts = path.split('?')[0]?.split('/').filter(Boolean) ?? [];
  let group: string | undefined;
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    group = '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    group = parts[1];
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  if (group === undefined || group.includes('*')) return undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  const [resource, , subresource] = rest;
  if (!resource || resource.includes('*')) return undefined;
  return { group, resource: subresource ? `${resource}/${subresource}` : resource };
}

/** Derives the permissions of one process: its entry, its directories, and what they import. */
export function deriveProcessCalls(name: ProcessName): ProcessCalls {
  return deriveCalls(reachableFiles(processRoots(name)));
}

/** Derives the permissions that the calls in these files need (each must be a root or import of the program). */
export function deriveCalls(files: string[]): ProcessCalls {
  const p = getProgram();
  const checker = p.getTypeChecker();
  const result: ProcessCalls = {
    permissions: new Map(),
    unmapped: [],
    unresolved: [],
    files: files.map((f) => relative(repoRoot, f)),
  };
  const grant = (perm: Permission, site: Site) => {
    const key = permissionKey(perm);
    result.permissions.set(key, [...(result.permissions.get(key) ?? []), site]);
  };
  const pathVerbs = new Set<string>();
  const pathSites: Site[] = [];
  const apiPaths: { path: string; site: Site }[] = [];

  for (const file of files) {
    const sf = p.getSourceFile(file);
    if (!sf) throw new Error(`${file} is not part of the program`);
    const rel = relative(repoRoot, file);
    const siteAt = (node: ts.Node, api: string, detail?: string): Site => ({
      file: rel,
      line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
      api,
      detail,
    });
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
      const isPathLiteral =
        ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node);
      if (isPathLiteral && file === KUBE_JSON && !inExportedDeclaration(node)) return;
      if (isPathLiteral) {
        const path = evaluatePath(checker, node);
        if (path !== undefined && /^\/apis?\//.test(path)) {
          apiPaths.push({ path, site: siteAt(node, 'path', path) });
        }
      }
      if (ts.isIdentifier(node)) inspectIdentifier(node);
      ts.forEachChild(node, visit);
    };
    const inspectIdentifier = (id: ts.Identifier): void => {
      let symbol = checker.getSymbolAtLocation(id);
      if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
      const decl = symbol?.declarations?.[0];
      if (decl && decl.getSourceFile().fileName === KUBE_JSON) return inspectJsonCall(id, decl);
      if (!decl || !isClientNode(decl.getSourceFile().fileName) || !isFunctionLike(decl)) return;
      const api = apiName(decl);
      if (api === undefined) {
        result.unmapped.push(siteAt(id, id.text));
        return;
      }
      const call = callOf(id);
      const typed = TYPED_CALLS[api];
      if (typed) {
        const [group, resource, verb] = typed;
        grant({ group, resource, verb }, siteAt(id, api));
        return;
      }
      const custom = CUSTOM_OBJECT_CALLS[api];
      if (custom) {
        const arg = call?.arguments[0];
        const group = arg && literalProperty(checker, arg, 'group');
        const plural = arg && literalProperty(checker, arg, 'plural');
        if (group === undefined || plural === undefined) {
          result.unresolved.push({ ...siteAt(id, api), reason: 'group or plural is not a string literal type' });
          return;
        }
        const resource = custom.subresource ? `${plural}/${custom.subresource}` : plural;
        grant({ group, resource, verb: custom.verb }, siteAt(id, api, `${group}/${resource}`));
        return;
      }
      const pathVerbsOf = PATH_CALLS[api];
      if (pathVerbsOf) {
        for (const v of pathVerbsOf) pathVerbs.add(v);
        pathSites.push(siteAt(id, api));
        return;
      }
      if (NO_REQUEST.has(api)) return;
      result.unmapped.push(siteAt(id, api));
    };
    /** A JsonResource method grants its verb on the resource of its type argument; kubeCall stays inside. */
    const inspectJsonCall = (id: ts.Identifier, decl: ts.Declaration): void => {
      const api = apiName(decl);
      if (api === 'kubeCall' && file !== KUBE_JSON && callOf(id)) {
        result.unresolved.push({ ...siteAt(id, api), reason: 'a direct kubeCall: call a JsonResource method instead' });
        return;
      }
      const verb = api === undefined ? undefined : JSON_RESOURCE_CALLS[api];
      const call = callOf(id);
      if (api === undefined || verb === undefined || !call || !ts.isPropertyAccessExpression(call.expression)) return;
      const receiver = checker.getTypeAtLocation(call.expression.expression);
      const [objectType] = checker.getTypeArguments(receiver as ts.TypeReference);
      // An alias (EventJson) by its own name, an interface or class by its symbol's.
      const typeName = objectType?.aliasSymbol?.getName() ?? objectType?.getSymbol()?.getName() ?? '';
      const target = JSON_RESOURCE_TYPES[typeName];
      if (!target) {
        result.unresolved.push({ ...siteAt(id, api), reason: 'a JsonResource of a type JSON_RESOURCE_TYPES lacks' });
        return;
      }
      // mergePatch(ref, body, 'status') patches the status subresource.
      const subresource = api === 'JsonResource.mergePatch' ? call.arguments[2] : undefined;
      if (subresource && !ts.isStringLiteral(subresource)) {
        result.unresolved.push({ ...siteAt(id, api), reason: 'a subresource that is not a string literal' });
        return;
      }
      const [group, plural] = target;
      const resource = subresource ? `${plural}/${subresource.text}` : plural;
      grant({ group, resource, verb }, siteAt(id, api, `${group}/${resource}`));
    };
    visit(sf);
  }

  if (apiPaths.length > 0 && pathVerbs.size === 0) {
    for (const { site } of apiPaths) {
      result.unresolved.push({ ...site, reason: 'an API path that no known path-based call (PATH_CALLS) uses' });
    }
  }
  if (pathSites.length > 0 && apiPaths.length === 0) {
    for (const site of pathSites) result.unresolved.push({ ...site, reason: 'no API path string in the process' });
  }
  for (const { path, site } of apiPaths) {
    const target = parseApiPath(path);
    if (!target) {
      result.unresolved.push({ ...site, reason: `cannot tell the resource of path ${path}` });
      continue;
    }
    for (const verb of pathVerbs) {
      grant({ ...target, verb }, { ...site, api: pathSites.map((s) => s.api).join(' | ') });
    }
  }
  return result;
}

/** The sites of a permission, for messages. */
export function describeSites(sites: Site[]): string {
  return sites.map((s) => `${s.file}:${s.line} ${s.api}${s.detail ? ` (${s.detail})` : ''}`).join('; ');
}
