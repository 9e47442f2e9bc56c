// Every dashboard page at 390×844, a phone (see pages.ts).
import { checkEveryPage } from './pages.ts'

await checkEveryPage('phone')
