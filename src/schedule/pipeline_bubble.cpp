#include "schedule/pipeline_bubble.h"
