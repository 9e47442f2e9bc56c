// Every dashboard page at 1280×800 (see pages.ts).
import { checkEveryPage } from './pages.ts'

await checkEveryPage('desktop')
