// Pi's own model resolution, printed for pikit's tests: node pi_models.mjs AGENT_DIR [USAGES_JSON]
// Creates Pi's ModelRuntime offline (PI_OFFLINE=1) with AGENT_DIR's models.json and
// models-store.json, prints every model it knows and, for each {provider, id, usage} of
// USAGES_JSON, the cost Pi's calculateCost gives. Run it in the folder where
// @earendil-works/pi-coding-agent is installed. Pi's modules are imported by path: the package's
// entry point also loads parts that need a newer Node than the model runtime does.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = join(process.cwd(), "node_modules", "@earendil-works");
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { ModelRuntime } = await load("pi-coding-agent/dist/core/model-runtime.js");
const { calculateCost } = await load("pi-ai/dist/models.js");

const [agentDir, usagesJson] = process.argv.slice(2);
const runtime = await ModelRuntime.create({
    modelsPath: join(agentDir, "models.json"),
    authPath: join(agentDir, "auth.json"),
    allowModelNetwork: false,
});
const models = runtime.getAllModels().map((model) => ({
    provider: model.provider,
    id: model.id,
    type: model.type ?? "chat",
    contextWindow: model.contextWindow ?? null,
    maxTokens: model.maxTokens ?? null,
    cost: model.cost ?? null,
}));
const costs = JSON.parse(usagesJson ?? "[]").map(({ provider, id, usage }) => {
    const model = runtime.getModel(provider, id);
    const full = { cacheRead: 0, cacheWrite: 0, ...usage, cost: {} };
    return { provider, id, usage, cost: { ...calculateCost(model, full) } };
});
process.stdout.write(JSON.stringify({ models, costs }));
