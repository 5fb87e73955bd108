import { serveTabs } from 'airlock-agents/tabs';

serveTabs();
