// Print Pi's built-in model catalogs as JSON: every provider, every model, the fields pikit keeps.
// Run from a folder where @earendil-works/pi-ai is installed (generate.py does that).
import { readFileSync } from "node:fs";
import { builtinProviders, getBuiltinModelDataGeneratedAt } from "@earendil-works/pi-ai/providers/all";

const piAiPackage = JSON.parse(readFileSync(new URL("node_modules/@earendil-works/pi-ai/package.json", import.meta.url), "utf8"));

function rates(cost) {
    return { input: cost.input, output: cost.output, cacheRead: cost.cacheRead, cacheWrite: cost.cacheWrite };
}

const providers = {};
for (const provider of builtinProviders()) {
    providers[provider.id] = (provider.getAllModels?.() ?? provider.getModels()).map((model) => {
        const entry = { id: model.id, name: model.name };
        if ((model.type ?? "chat") !== "chat") entry.type = model.type;
        entry.contextWindow = model.contextWindow ?? null;
        entry.maxTokens = model.maxTokens ?? null;
        entry.cost = rates(model.cost);
        if (model.cost.tiers) {
            entry.cost.tiers = model.cost.tiers.map((tier) => ({ inputTokensAbove: tier.inputTokensAbove, ...rates(tier) }));
        }
        return entry;
    });
}
const generatedAt = getBuiltinModelDataGeneratedAt();
process.stdout.write(JSON.stringify({
    piAi: piAiPackage.version,
    generatedAt: generatedAt === undefined ? null : new Date(generatedAt).toISOString(),
    providers,
}));
