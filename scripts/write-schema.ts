// Writes schema/recipe.v1.json from the recipe's zod definition (npm run schema). A test checks the
// committed file is up to date.
import { writeFileSync } from 'node:fs';
import { recipeJsonSchema } from '../src/recipes/recipeSchema.ts';

writeFileSync(
  new URL('../schema/recipe.v1.json', import.meta.url),
  `${JSON.stringify(recipeJsonSchema(), null, 2)}\n`,
);
